import { Command, CommanderError } from "commander";
import { ConfigError } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { errorMessage, UserFacingError } from "../core/errors.ts";
import { registerCallCommand } from "./call-command.ts";
import { registerDemoCommand } from "./demo-command.ts";
import { registerIndexCommand } from "./index-command.ts";
import { registerKeysCommand } from "./keys-command.ts";
import { registerMetadataCommand } from "./metadata-command.ts";
import { registerMigrateCommand } from "./migrate-command.ts";
import { registerServeCommand } from "./serve-command.ts";
import type { CommandLifecycle } from "./shutdown.ts";
import { registerSpamCommand } from "./spam-command.ts";
import { registerStartCommand } from "./start-command.ts";
import { registerWatchCommand } from "./watch-command.ts";
import { registerWebhooksCommand } from "./webhooks-command.ts";

/**
 * The `mintlens` command line: runs the command `args` name (the arguments after the program's
 * name) to its end, releases what it opened, and resolves with the exit code. src/main.ts runs it
 * for the process; the tests run commands in their own process through it.
 */
export async function runCommandLine(
  args: readonly string[],
  environment: Environment,
  lifecycle: CommandLifecycle,
): Promise<number> {
  const program = new Command()
    .name("mintlens")
    .description(
      "Self-hosted NFT analytics: indexes EVM chains into PostgreSQL and serves the NFT analytics API",
    )
    .showHelpAfterError()
    // Options after a subcommand are that subcommand's: `metadata refresh --chain` is refresh's.
    .enablePositionalOptions()
    // Help and usage errors end the command like any other, instead of exiting the process.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => environment.stdout.write(text),
      writeErr: (text) => environment.stderr.write(text),
    });
  registerStartCommand(program, lifecycle, environment);
  registerIndexCommand(program, lifecycle, environment);
  registerServeCommand(program, lifecycle, environment);
  registerMetadataCommand(program, lifecycle, environment);
  registerDemoCommand(program, lifecycle, environment);
  registerMigrateCommand(program, lifecycle, environment);
  registerKeysCommand(program, lifecycle, environment);
  registerSpamCommand(program, lifecycle, environment);
  registerWebhooksCommand(program, lifecycle, environment);
  registerCallCommand(program, environment, lifecycle);
  registerWatchCommand(program, environment, lifecycle);

  const report = (error: unknown) => {
    if (error instanceof ConfigError || error instanceof UserFacingError) {
      environment.stderr.write(`mintlens: ${error.message}\n`);
    } else {
      environment.stderr.write(`mintlens: unexpected error: ${errorMessage(error)}\n`);
      if (environment.debug) environment.stderr.write(`${(error as Error).stack ?? ""}\n`);
    }
  };

  let code = 0;
  try {
    await program.parseAsync([...args], { from: "user" });
  } catch (error) {
    // Commander has printed the help, or the usage error and the help.
    if (error instanceof CommanderError) code = error.exitCode;
    else {
      report(error);
      code = 1;
    }
  }
  for (const error of await lifecycle.close()) {
    report(error);
    code = 1;
  }
  // A stop asked for by a signal is a success.
  return code;
}
