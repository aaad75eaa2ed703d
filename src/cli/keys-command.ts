import type { Command } from "commander";
import { displayKeyId, generateKey, isValidUserName, USER_RULE } from "../api/keys.ts";
import { ConfigError, parseDatabaseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { UserFacingError } from "../core/errors.ts";
import { createLogger } from "../core/logger.ts";
import type { Sql } from "../store/pg/database.ts";
import {
  type ApiKeyListing,
  insertApiKey,
  listApiKeys,
  replaceApiKey,
  revokeApiKey,
} from "../store/tables/api-keys.ts";
import { COMMAND_POOL, openDatabase } from "./open-database.ts";
import type { Lifecycle } from "./shutdown.ts";
import { formatTable } from "./table.ts";

interface DatabaseFlags {
  databaseUrl?: string;
  dataDir?: string;
  logLevel?: string;
}

/**
 * `mintlens keys create|rotate|revoke|list`. A new key goes to stdout, alone on its line, and
 * is never shown again; everything else (logs, notes) goes to stderr, so `key=$(mintlens keys
 * create alice)` captures exactly the key.
 */
export function registerKeysCommand(program: Command, lifecycle: Lifecycle, environment: Environment): void {
  const keys = program.command("keys").description("manage the API keys: one per user");

  const withDatabase = (command: Command) =>
    command
      .option(
        "--database-url <url>",
        "PostgreSQL 15+ URL (env DATABASE_URL); default: the embedded PostgreSQL",
      )
      .option("--data-dir <dir>", "data directory of the embedded PostgreSQL (default .mintlens)")
      .option("--log-level <level>", "fatal, error, warn, info, debug or trace (env MINTLENS_LOG_LEVEL)");

  const open = async (flags: DatabaseFlags): Promise<Sql> => {
    const config = parseDatabaseConfig(flags, environment.variables);
    if (Object.keys(config.chainDatabaseUrls).length > 0) {
      throw new ConfigError([
        "database url: API keys are kept in the default database; give its URL without chain=",
      ]);
    }
    const logger = createLogger(config.logLevel);
    return (
      await openDatabase(config.databaseUrl, config.dataDir, logger, lifecycle, {
        schema: "check",
        pool: COMMAND_POOL,
      })
    ).sql;
  };

  withDatabase(keys.command("create <user>"))
    .description("create the API key of a new user and print it, once")
    .action(async (user: string, flags: DatabaseFlags) => {
      checkUserName(user);
      const sql = await open(flags);
      const key = generateKey();
      const result = await insertApiKey(sql, { userName: user, keyId: key.keyId, keyHash: key.hash });
      if (!result.created) {
        const { revokedAt } = result.existing;
        throw new UserFacingError(
          revokedAt === null
            ? `user ${user} already has an API key; \`mintlens keys rotate ${user}\` replaces it`
            : `the API key of user ${user} was revoked at ${revokedAt.toISOString()}; \`mintlens keys rotate ${user}\` gives the user a new key`,
        );
      }
      environment.stdout.write(`${key.key}\n`);
      environment.stderr.write(
        `mintlens: created the API key ${displayKeyId(key.keyId)} of ${user}; it is shown only this once\n`,
      );
    });

  withDatabase(keys.command("rotate <user>"))
    .description("replace a user's API key (re-enabling a revoked user) and print the new key, once")
    .action(async (user: string, flags: DatabaseFlags) => {
      checkUserName(user);
      const sql = await open(flags);
      const key = generateKey();
      if (!(await replaceApiKey(sql, { userName: user, keyId: key.keyId, keyHash: key.hash }))) {
        throw unknownUser(user);
      }
      environment.stdout.write(`${key.key}\n`);
      environment.stderr.write(
        `mintlens: replaced the API key of ${user} by ${displayKeyId(key.keyId)}; the old key no longer works\n`,
      );
    });

  withDatabase(keys.command("revoke <user>"))
    .description("disable a user's API key (`keys rotate` gives the user a new one)")
    .action(async (user: string, flags: DatabaseFlags) => {
      checkUserName(user);
      const sql = await open(flags);
      const revoked = await revokeApiKey(sql, user);
      if (!revoked) throw unknownUser(user);
      environment.stderr.write(
        revoked.already
          ? `mintlens: the API key of ${user} was already revoked at ${revoked.revokedAt.toISOString()}\n`
          : `mintlens: revoked the API key of ${user}\n`,
      );
    });

  withDatabase(keys.command("list"))
    .description("list the users, their key ids and when their keys were created, rotated and revoked")
    .action(async (flags: DatabaseFlags) => {
      const sql = await open(flags);
      environment.stdout.write(formatListing(await listApiKeys(sql)));
    });
}

function checkUserName(user: string): void {
  if (!isValidUserName(user)) {
    throw new UserFacingError(`invalid user name ${JSON.stringify(user)}: use ${USER_RULE}`);
  }
}

function unknownUser(user: string): UserFacingError {
  return new UserFacingError(`no API key for user ${user}; \`mintlens keys create ${user}\` creates one`);
}

/** One line per user under a header, columns aligned; "-" for a time that has not happened. */
export function formatListing(rows: readonly ApiKeyListing[]): string {
  const time = (t: Date | null) => (t === null ? "-" : t.toISOString());
  return formatTable(
    ["USER", "KEY ID", "CREATED", "ROTATED", "REVOKED"],
    rows.map((r) => [
      r.userName,
      displayKeyId(r.keyId),
      time(r.createdAt),
      time(r.rotatedAt),
      time(r.revokedAt),
    ]),
  );
}
