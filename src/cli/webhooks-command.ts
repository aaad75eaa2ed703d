import type { Command } from "commander";
import { ConfigError, parseDatabaseConfig } from "../config/config.ts";
import type { Environment } from "../config/environment.ts";
import { webhookAllow } from "../config/webhook-config.ts";
import { UserFacingError } from "../core/errors.ts";
import type { Address } from "../core/hex.ts";
import { createLogger } from "../core/logger.ts";
import { STREAM_EVENT_KINDS, type StreamEventKind } from "../core/stream-events.ts";
import { parseAllowList } from "../metadata/ssrf.ts";
import type { Sql } from "../store/pg/database.ts";
import {
  latestCursor,
  oldestCursor,
  readStreamEvents,
  StreamCursorError,
} from "../store/read/stream-events.ts";
import {
  getWebhook,
  insertWebhook,
  listWebhooks,
  removeWebhook,
  resumeWebhook,
  type WebhookDelivery,
  type WebhookListing,
  webhookLog,
} from "../store/tables/webhooks.ts";
import { newWebhookId, newWebhookSecret } from "../webhooks/signature.ts";
import { TargetRefused, vetTarget } from "../webhooks/target.ts";
import { type ChainDatabases, openChainDatabases } from "./chain-databases.ts";
import { COMMAND_POOL } from "./open-database.ts";
import { collect } from "./repeatable.ts";
import type { Lifecycle } from "./shutdown.ts";
import { formatTable } from "./table.ts";
import { WEBHOOK_ALLOW_FLAG, WEBHOOK_ALLOW_HELP } from "./webhook-runner.ts";

interface DatabaseFlags {
  databaseUrl?: string[];
  dataDir?: string;
  logLevel?: string;
}

interface AddFlags extends DatabaseFlags {
  chain: string;
  kind?: string[];
  contract?: string[];
  address?: string[];
  confirmations?: string;
  excludeSpam?: boolean;
  secret?: string;
  from?: string;
  webhookAllow?: string[];
}

/** Shortest secret an operator may choose: a guessable one would let anyone sign deliveries. */
const MIN_SECRET_LENGTH = 24;

/**
 * `mintlens webhooks add|list|remove|resume|log`: subscriptions of URLs to a chain's live event
 * stream, which the deliverer beside the chain's indexer POSTs to (docs/webhooks.md). A new
 * subscription's id goes to stdout, and its generated secret on the next line, shown only then;
 * notes go to stderr.
 */
export function registerWebhooksCommand(
  program: Command,
  lifecycle: Lifecycle,
  environment: Environment,
): void {
  const webhooks = program
    .command("webhooks")
    .description("manage the webhook subscriptions to the live event stream");

  const withDatabase = (command: Command) =>
    command
      .option(
        "--database-url <[chain=]url>",
        "PostgreSQL 15+ URL: url for the default database, chain=url for a chain's own; repeatable (env DATABASE_URL); default: the embedded PostgreSQL",
        collect,
      )
      .option("--data-dir <dir>", "data directory of the embedded PostgreSQL (default .mintlens)")
      .option("--log-level <level>", "fatal, error, warn, info, debug or trace (env MINTLENS_LOG_LEVEL)");

  /** The databases of `chains` (subscriptions are kept in the database of their chain), or every one configured. */
  const open = async (flags: DatabaseFlags, chains?: readonly string[]): Promise<ChainDatabases> => {
    const config = parseDatabaseConfig(flags, environment.variables);
    const logger = createLogger(config.logLevel);
    return openChainDatabases(config, chains ?? Object.keys(config.chainDatabaseUrls), logger, lifecycle, {
      schema: "check",
      pool: COMMAND_POOL,
      withDefault: chains === undefined,
    });
  };

  /** The database holding subscription `id`. */
  const holding = async (id: string, flags: DatabaseFlags): Promise<Sql> => {
    for (const { database } of (await open(flags)).groups) {
      if (await getWebhook(database.sql, id)) return database.sql;
    }
    throw new UserFacingError(`no webhook ${id}; \`mintlens webhooks list\` lists them`);
  };

  withDatabase(webhooks.command("add <url>"))
    .description("subscribe a URL to a chain's events; prints its id and, once, its secret")
    .requiredOption("--chain <name>", "the chain, by the name it is indexed under")
    .option(
      "--kind <kind>",
      "an event kind to deliver: transfer, sale or ownership; repeatable (default: all)",
      collect,
    )
    .option("--contract <address>", "deliver only this collection's events; repeatable", collect)
    .option(
      "--address <address>",
      "deliver only events of this address (a sender, recipient, holder, seller or buyer); repeatable",
      collect,
    )
    .option("--confirmations <n>", "deliver only events of blocks at least n below the indexed head")
    .option("--exclude-spam", "leave out the events of collections judged spam when a batch is read")
    .option(
      "--secret <secret>",
      `the signing secret, at least ${MIN_SECRET_LENGTH} characters (default: generated)`,
    )
    .option(
      "--from <cursor>",
      "now (only events to come, the default), or the cursor to deliver after (0: the oldest kept)",
    )
    .option(WEBHOOK_ALLOW_FLAG, WEBHOOK_ALLOW_HELP, collect)
    .action(async (url: string, flags: AddFlags) => {
      const problems: string[] = [];
      const kinds = (flags.kind ?? []).map((k) => k.trim().toLowerCase());
      for (const k of kinds)
        if (!(STREAM_EVENT_KINDS as readonly string[]).includes(k))
          problems.push(`kind: ${k} is not one of ${STREAM_EVENT_KINDS.join(", ")}`);
      const addresses = (label: string, values: string[] | undefined) =>
        (values ?? []).map((v) => {
          if (!/^0x[0-9a-fA-F]{40}$/.test(v)) problems.push(`${label}: ${v} is not an address`);
          return v.toLowerCase() as Address;
        });
      const contracts = addresses("contract", flags.contract);
      const parties = addresses("address", flags.address);
      const confirmations = flags.confirmations === undefined ? undefined : Number(flags.confirmations);
      if (confirmations !== undefined && !/^\d{1,6}$/.test(flags.confirmations ?? ""))
        problems.push(`confirmations: ${flags.confirmations} is not a whole number of blocks`);
      if (flags.secret !== undefined && flags.secret.length < MIN_SECRET_LENGTH)
        problems.push(
          `secret: shorter than ${MIN_SECRET_LENGTH} characters; leave it out to have one generated`,
        );
      const from = (flags.from ?? "now").trim().toLowerCase();
      if (from !== "now" && !/^\d{1,20}$/.test(from))
        problems.push(`from: ${flags.from} is not now or a cursor`);
      let allow: ReturnType<typeof parseAllowList> = [];
      try {
        allow = parseAllowList(webhookAllow(flags, environment.variables));
      } catch (error) {
        problems.push(`webhook allow: ${(error as Error).message}`);
      }
      if (problems.length > 0) throw new ConfigError(problems);
      try {
        await vetTarget(url, allow);
      } catch (error) {
        if (!(error instanceof TargetRefused)) throw error;
        throw new UserFacingError(
          `webhook ${url}: ${error.message}; a target on a private address must be allowed with --webhook-allow, here and on the command that delivers`,
        );
      }
      const sql = (await open(flags, [flags.chain])).of(flags.chain).sql;
      const chainId = await chainIdOf(sql, flags.chain);
      let cursor: bigint;
      if (from === "now") cursor = await latestCursor(sql, chainId);
      else {
        cursor = BigInt(from);
        try {
          await readStreamEvents(sql, chainId, { after: cursor, limit: 1 });
        } catch (error) {
          if (error instanceof StreamCursorError) throw new UserFacingError(`from: ${error.message}`);
          throw error;
        }
      }
      const id = newWebhookId();
      const secret = flags.secret ?? newWebhookSecret();
      await insertWebhook(sql, {
        id,
        chainId,
        url,
        secret,
        kinds: kinds as StreamEventKind[],
        contracts,
        addresses: parties,
        confirmations,
        excludeSpam: flags.excludeSpam === true,
        cursor,
      });
      environment.stdout.write(`${id}\n`);
      if (flags.secret === undefined) {
        environment.stdout.write(`${secret}\n`);
        environment.stderr.write(
          `mintlens: added webhook ${id} on ${flags.chain} from cursor ${cursor}; its secret (the second line) is shown only this once\n`,
        );
      } else {
        environment.stderr.write(`mintlens: added webhook ${id} on ${flags.chain} from cursor ${cursor}\n`);
      }
    });

  withDatabase(webhooks.command("list"))
    .description("list the subscriptions: id, chain, URL, filters, state, cursor, failures and last error")
    .option("--chain <name>", "only this chain's")
    .action(async (flags: DatabaseFlags & { chain?: string }) => {
      const databases = await open(flags, flags.chain === undefined ? undefined : [flags.chain]);
      const names = new Map<number, string>();
      const rows: WebhookListing[] = [];
      for (const { database } of databases.groups) {
        const { sql } = database;
        for (const c of await sql<
          { chain_id: string; name: string }[]
        >`SELECT chain_id::text, name FROM chains`)
          names.set(Number(c.chain_id), c.name);
        const chainId = flags.chain === undefined ? undefined : await chainIdOf(sql, flags.chain);
        rows.push(...(await listWebhooks(sql, chainId)));
      }
      environment.stdout.write(formatWebhooks(rows, names));
    });

  withDatabase(webhooks.command("remove <id>"))
    .description("remove a subscription and its delivery log")
    .action(async (id: string, flags: DatabaseFlags) => {
      const sql = await holding(id, flags);
      if (!(await removeWebhook(sql, id))) throw new UserFacingError(`no webhook ${id}`);
      environment.stderr.write(`mintlens: removed webhook ${id}\n`);
    });

  withDatabase(webhooks.command("resume <id>"))
    .description("make a paused subscription active again, its failures forgotten")
    .option(
      "--from <cursor>",
      "where to go on from: where it stopped (the default), now, oldest (the oldest event kept), or a cursor",
    )
    .action(async (id: string, flags: DatabaseFlags & { from?: string }) => {
      const sql = await holding(id, flags);
      const hook = await getWebhook(sql, id);
      if (hook === undefined) throw new UserFacingError(`no webhook ${id}`);
      const from = flags.from?.trim().toLowerCase();
      let cursor: bigint | undefined;
      if (from === "now") cursor = await latestCursor(sql, hook.chainId);
      else if (from === "oldest") cursor = (await oldestCursor(sql, hook.chainId)).cursor;
      else if (from !== undefined) {
        if (!/^\d{1,20}$/.test(from))
          throw new ConfigError([`from: ${flags.from} is not now, oldest or a cursor`]);
        cursor = BigInt(from);
        try {
          await readStreamEvents(sql, hook.chainId, { after: cursor, limit: 1 });
        } catch (error) {
          if (error instanceof StreamCursorError) throw new UserFacingError(`from: ${error.message}`);
          throw error;
        }
      }
      if (!(await resumeWebhook(sql, id, cursor))) throw new UserFacingError(`no webhook ${id}`);
      environment.stderr.write(
        `mintlens: webhook ${id} is active${cursor === undefined ? ` from cursor ${hook.cursor}` : ` from cursor ${cursor}`}\n`,
      );
    });

  withDatabase(webhooks.command("log <id>"))
    .description("list a subscription's latest delivery attempts, newest first")
    .option("--limit <n>", "attempts listed (default 20)")
    .action(async (id: string, flags: DatabaseFlags & { limit?: string }) => {
      const limit = flags.limit === undefined ? 20 : Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new ConfigError([`limit: ${flags.limit} is not a whole number from 1 to 1000`]);
      const sql = await holding(id, flags);
      environment.stdout.write(formatLog(await webhookLog(sql, id, limit)));
    });
}

async function chainIdOf(sql: Sql, name: string): Promise<number> {
  const [chain] = await sql<{ chain_id: string }[]>`SELECT chain_id::text FROM chains WHERE name = ${name}`;
  if (chain === undefined) throw new UserFacingError(`chain ${name} is not in the store`);
  return Number(chain.chain_id);
}

/** A subscription's filters in a few words: `all`, or the kinds, contracts, addresses and depth it keeps to, and whether it leaves spam out. */
export function describeFilters(
  hook: Pick<WebhookListing, "kinds" | "contracts" | "addresses" | "confirmations" | "excludeSpam">,
): string {
  const parts = [
    ...(hook.kinds.length > 0 ? [`kinds=${hook.kinds.join(",")}`] : []),
    ...(hook.contracts.length > 0 ? [`contracts=${hook.contracts.join(",")}`] : []),
    ...(hook.addresses.length > 0 ? [`addresses=${hook.addresses.join(",")}`] : []),
    ...(hook.confirmations === undefined ? [] : [`confirmations=${hook.confirmations}`]),
    ...(hook.excludeSpam ? ["exclude-spam"] : []),
  ];
  return parts.length === 0 ? "all" : parts.join(" ");
}

/** One line per subscription under a header, columns aligned; never a secret. */
export function formatWebhooks(
  rows: readonly WebhookListing[],
  chainNames: ReadonlyMap<number, string>,
): string {
  const oneLine = (text: string) => text.replace(/\s+/g, " ").slice(0, 120);
  return formatTable(
    ["ID", "CHAIN", "URL", "FILTERS", "STATE", "CURSOR", "FAILURES", "LAST ERROR"],
    rows.map((r) => [
      r.id,
      chainNames.get(r.chainId) ?? String(r.chainId),
      r.url,
      describeFilters(r),
      r.state === "paused" ? `paused: ${oneLine(r.pausedReason ?? "")}` : "active",
      r.cursor.toString(),
      String(r.failures),
      r.lastError === undefined ? "-" : oneLine(r.lastError),
    ]),
  );
}

/** One line per attempt under a header, columns aligned. */
export function formatLog(rows: readonly WebhookDelivery[]): string {
  return formatTable(
    ["AT", "CURSORS", "EVENTS", "ATTEMPT", "STATUS", "MS", "ERROR"],
    rows.map((r) => [
      r.at.toISOString(),
      `${r.firstCursor}-${r.lastCursor}`,
      String(r.events),
      String(r.attempt),
      r.status === undefined ? "-" : String(r.status),
      String(r.durationMs),
      r.error ?? "-",
    ]),
  );
}
