import { Command } from "commander";
import { registerCallCommand } from "./cli/call-command.ts";
import { registerDemoCommand } from "./cli/demo-command.ts";
import { registerIndexCommand } from "./cli/index-command.ts";
import { registerKeysCommand } from "./cli/keys-command.ts";
import { registerMetadataCommand } from "./cli/metadata-command.ts";
import { registerMigrateCommand } from "./cli/migrate-command.ts";
import { registerServeCommand } from "./cli/serve-command.ts";
import { createLifecycle } from "./cli/shutdown.ts";
import { registerStartCommand } from "./cli/start-command.ts";
import { ignoreStrayConnectionRejections } from "./cli/stray-rejections.ts";
import { ConfigError } from "./config/config.ts";
import { readEnvironment } from "./config/environment.ts";
import { errorMessage, UserFacingError } from "./core/errors.ts";

const environment = readEnvironment();
// A failover must not end the process from inside the database driver: see the function.
ignoreStrayConnectionRejections();
const lifecycle = createLifecycle();
const program = new Command()
  .name("mintlens")
  .description(
    "Self-hosted NFT analytics: indexes EVM chains into PostgreSQL and serves the NFT analytics API",
  )
  .showHelpAfterError()
  // Options after a subcommand are that subcommand's: `metadata refresh --chain` is refresh's.
  .enablePositionalOptions();
registerStartCommand(program, lifecycle, environment);
registerIndexCommand(program, lifecycle, environment);
registerServeCommand(program, lifecycle, environment);
registerMetadataCommand(program, lifecycle, environment);
registerDemoCommand(program, lifecycle, environment);
registerMigrateCommand(program, lifecycle, environment);
registerKeysCommand(program, lifecycle, environment);
registerCallCommand(program, environment);

const report = (error: unknown) => {
  if (error instanceof ConfigError || error instanceof UserFacingError) {
    process.stderr.write(`mintlens: ${error.message}\n`);
  } else {
    process.stderr.write(`mintlens: unexpected error: ${errorMessage(error)}\n`);
    if (environment.debug) process.stderr.write(`${(error as Error).stack ?? ""}\n`);
  }
};

let failed = false;
try {
  await program.parseAsync(process.argv);
} catch (error) {
  report(error);
  failed = true;
}
for (const error of await lifecycle.close()) {
  report(error);
  failed = true;
}
// A stop asked for by a signal is a success; the process ends once nothing is left running.
process.exitCode = failed ? 1 : 0;
