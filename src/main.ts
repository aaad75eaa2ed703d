import { Command } from "commander";
import { registerDemoCommand } from "./cli/demo-command.ts";
import { registerIndexCommand } from "./cli/index-command.ts";
import { registerMigrateCommand } from "./cli/migrate-command.ts";
import { ConfigError } from "./config/config.ts";
import { errorMessage, UserFacingError } from "./core/errors.ts";

const program = new Command()
  .name("mintlens")
  .description("Self-hosted NFT analytics: indexes EVM chains into PostgreSQL")
  .showHelpAfterError();
registerIndexCommand(program);
registerDemoCommand(program);
registerMigrateCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof ConfigError || error instanceof UserFacingError) {
    process.stderr.write(`mintlens: ${error.message}\n`);
  } else {
    process.stderr.write(`mintlens: unexpected error: ${errorMessage(error)}\n`);
    if (process.env.MINTLENS_DEBUG) process.stderr.write(`${(error as Error).stack ?? ""}\n`);
  }
  // Exit explicitly: the embedded PostgreSQL's exit hook would otherwise end the process with 0.
  process.exit(1);
}
