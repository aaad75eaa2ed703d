import type { Command } from "commander";
import { ConfigError, parseDatabaseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { UserFacingError } from "../core/errors.ts";
import type { Address } from "../core/hex.ts";
import { createLogger } from "../core/logger.ts";
import { spamVerdicts } from "../store/read/spam.ts";
import {
  clearSpamOverride,
  listSpamOverrides,
  type SpamOverride,
  setSpamOverride,
} from "../store/tables/spam-overrides.ts";
import { type ChainDatabases, openChainDatabases } from "./chain-databases.ts";
import { COMMAND_POOL } from "./open-database.ts";
import { collect } from "./repeatable.ts";
import type { Lifecycle } from "./shutdown.ts";
import { formatTable } from "./table.ts";

interface DatabaseFlags {
  databaseUrl?: string[];
  dataDir?: string;
  logLevel?: string;
}

interface ContractFlags extends DatabaseFlags {
  chain: string;
  note?: string;
}

/**
 * `mintlens spam mark|unmark|clear|list`: an operator's decisions about contracts, which win over
 * the computed spam verdicts from the moment they are written (the API's answers move with them
 * within its one-second version poll).
 */
export function registerSpamCommand(program: Command, lifecycle: Lifecycle, environment: Environment): void {
  const spam = program
    .command("spam")
    .description("decide which contracts are spam, whatever their computed verdict says");

  const withDatabase = (command: Command) =>
    command
      .option(
        "--database-url <[chain=]url>",
        "PostgreSQL 15+ URL: url for the default database, chain=url for a chain's own; repeatable (env DATABASE_URL); default: the embedded PostgreSQL",
        collect,
      )
      .option("--data-dir <dir>", "data directory of the embedded PostgreSQL (default .mintlens)")
      .option("--log-level <level>", "fatal, error, warn, info, debug or trace (env MINTLENS_LOG_LEVEL)");
  const withContract = (command: Command) =>
    withDatabase(command).requiredOption("--chain <name>", "the chain, by the name it was indexed under");

  /** The databases of `chains` (overrides are kept in the database of their chain), or every one configured. */
  const open = async (flags: DatabaseFlags, chains?: readonly string[]): Promise<ChainDatabases> => {
    const config = parseDatabaseConfig(flags, environment.variables);
    const logger = createLogger(config.logLevel);
    const own = Object.keys(config.chainDatabaseUrls);
    return openChainDatabases(config, chains ?? own, logger, lifecycle, {
      schema: "check",
      pool: COMMAND_POOL,
      withDefault: chains === undefined,
    });
  };
  const target = async (contract: string, flags: ContractFlags) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(contract))
      throw new ConfigError([`contract: ${contract} is not an address`]);
    const { sql } = (await open(flags, [flags.chain])).of(flags.chain);
    const [chain] = await sql<{ chain_id: string }[]>`
      SELECT chain_id::text FROM chains WHERE name = ${flags.chain}`;
    if (chain === undefined) throw new UserFacingError(`chain ${flags.chain} is not in the store`);
    return { sql, chainId: Number(chain.chain_id), address: contract.toLowerCase() as Address };
  };

  withContract(spam.command("mark <contract>"))
    .description("mark a contract spam: its NFTs leave wallets' lists")
    .option("--note <text>", "why, for whoever reads `spam list`")
    .action(async (contract: string, flags: ContractFlags) => {
      const { sql, chainId, address } = await target(contract, flags);
      await setSpamOverride(sql, chainId, address, true, flags.note ?? "");
      environment.stdout.write(`${address} on ${flags.chain}: spam\n`);
    });

  withContract(spam.command("unmark <contract>"))
    .description("declare a contract not spam, whatever its computed verdict")
    .option("--note <text>", "why, for whoever reads `spam list`")
    .action(async (contract: string, flags: ContractFlags) => {
      const { sql, chainId, address } = await target(contract, flags);
      await setSpamOverride(sql, chainId, address, false, flags.note ?? "");
      environment.stdout.write(`${address} on ${flags.chain}: not spam\n`);
    });

  withContract(spam.command("clear <contract>"))
    .description("remove the decision about a contract: its computed verdict applies again")
    .action(async (contract: string, flags: ContractFlags) => {
      const { sql, chainId, address } = await target(contract, flags);
      const cleared = await clearSpamOverride(sql, chainId, address);
      if (!cleared) throw new UserFacingError(`no decision about ${address} on ${flags.chain}`);
      const computed = (await spamVerdicts(sql, chainId, [address])).get(address);
      const now =
        computed === undefined || computed.source === "none"
          ? "not judged yet (not spam)"
          : `${computed.isSpam ? "spam" : "not spam"}, as computed (score ${computed.score})`;
      environment.stdout.write(`${address} on ${flags.chain}: ${now}\n`);
    });

  withDatabase(spam.command("list"))
    .description("list the decisions: chain, contract, spam or not, when, and the note")
    .action(async (flags: DatabaseFlags) => {
      const databases = await open(flags);
      const names = new Map<number, string>();
      const overrides: SpamOverride[] = [];
      for (const { database } of databases.groups) {
        const { sql } = database;
        for (const c of await sql<
          { chain_id: string; name: string }[]
        >`SELECT chain_id::text, name FROM chains`)
          names.set(Number(c.chain_id), c.name);
        overrides.push(...(await listSpamOverrides(sql)));
      }
      environment.stdout.write(formatOverrides(overrides, names));
    });
}

/** One line per decision under a header, columns aligned. */
export function formatOverrides(
  rows: readonly SpamOverride[],
  chainNames: ReadonlyMap<number, string>,
): string {
  return formatTable(
    ["CHAIN", "CONTRACT", "VERDICT", "CHANGED", "NOTE"],
    rows.map((r) => [
      chainNames.get(r.chainId) ?? String(r.chainId),
      r.contract,
      r.isSpam ? "spam" : "not spam",
      r.changedAt.toISOString(),
      r.note,
    ]),
  );
}
