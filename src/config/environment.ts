/** Environment variables as the process was started with them. */
export type Variables = Readonly<Record<string, string | undefined>>;

/**
 * The environment, read once when a command starts; everything below the command line is handed
 * the values it needs, so no module depends on when, or whether, the environment was read.
 */
export interface Environment {
  /** Every variable: the configuration reads `MINTLENS_*` and `DATABASE_URL` from them. */
  readonly variables: Variables;
  /** MINTLENS_DEBUG: unexpected errors are reported with their stack trace. */
  readonly debug: boolean;
  /** MINTLENS_ANVIL_BIN: the anvil the demo runs instead of the npm package's. */
  readonly anvilBinary: string | undefined;
}

export function readEnvironment(variables: Variables = { ...process.env }): Environment {
  return {
    variables: Object.freeze({ ...variables }),
    debug: Boolean(variables.MINTLENS_DEBUG),
    anvilBinary: variables.MINTLENS_ANVIL_BIN || undefined,
  };
}
