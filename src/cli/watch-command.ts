/**
 * `mintlens watch`: a live view of the event stream over gRPC, one line per event, for a terminal.
 * It reconnects from the last cursor it received when the connection drops or the server ends the
 * stream (with a growing wait, said on stderr), so nothing is missed or shown twice.
 */
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { Command } from "commander";
import { PROTO_ROOT } from "../api/rest.ts";
import type { Environment } from "../config/environment.ts";
import { UserFacingError } from "../core/errors.ts";
import { readKeyFile } from "./call-command.ts";
import { collect } from "./repeatable.ts";
import type { Lifecycle } from "./shutdown.ts";

interface WatchFlags {
  address: string;
  keyFile?: string;
  ca?: string;
  contract: string[];
  kind: string[];
  /** `--holder` and `--address-filter` name one option: commander keeps it under either name. */
  holder?: string[];
  addressFilter?: string[];
  after: string;
  confirmations?: string;
  excludeSpam?: boolean;
  symbol: string;
  json?: boolean;
}

/** A stream event as the published `.proto` decodes it (64-bit integers as strings, enums by name). */
interface WireEvent {
  cursor: string;
  transfer?: WireBody;
  ownership?: WireBody;
  sale?: WireBody;
  verdict?: { sale: WireBody; rule: string; verdictBlockNumber: string; verdictBlockTimestamp: string };
  retraction?: { retracted: WireEvent };
}
interface WireBody {
  place: { blockNumber: string; blockTimestamp: string; contractAddress: string; tokenId: string };
  fromAddress?: string;
  toAddress?: string;
  quantity?: string;
  holderAddress?: string;
  delta?: string;
  trade?: string;
  sellerAddress?: string;
  buyerAddress?: string;
  totalNativeWei?: string;
  totalUsd?: string;
  market?: string;
}
interface WireBatch {
  events: WireEvent[];
  nextCursor: string;
  headBlock: string;
}

const KINDS: Record<string, string> = {
  sale: "STREAM_EVENT_KIND_SALE",
  transfer: "STREAM_EVENT_KIND_TRANSFER",
  ownership: "STREAM_EVENT_KIND_OWNERSHIP",
};

/** Codes a reconnection cannot mend: the request or the key is wrong, or the cursor is gone. */
const FATAL = new Set([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.UNAUTHENTICATED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.NOT_FOUND,
  grpc.status.UNIMPLEMENTED,
]);
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 15_000;

const short = (address: string | undefined) =>
  address === undefined ? "?" : `${address.slice(0, 6)}…${address.slice(-4)}`;

/** Wei as coins, to at most six decimals. */
export function formatCoins(wei: string, symbol: string): string {
  const value = BigInt(wei);
  const whole = value / 10n ** 18n;
  const micro = (value % 10n ** 18n) / 10n ** 12n;
  const fraction = micro === 0n ? "" : `.${micro.toString().padStart(6, "0").replace(/0+$/, "")}`;
  return `${whole}${fraction} ${symbol}`;
}

/** One event as a line: time, block, kind, collection/token, who, and a sale's price. */
export function watchLine(event: WireEvent, symbol: string): string {
  if (event.retraction) return `RETRACTED ${watchLine(event.retraction.retracted, symbol)}`;
  if (event.verdict) {
    const { sale, rule, verdictBlockNumber, verdictBlockTimestamp } = event.verdict;
    const token = `${short(sale.place.contractAddress)}/${sale.place.tokenId}`;
    return `${verdictBlockTimestamp}  #${verdictBlockNumber}  ${"verdict".padEnd(9)} ${token}  ${rule} on the sale of #${sale.place.blockNumber}: ${short(sale.sellerAddress)} → ${short(sale.buyerAddress)}  ${formatCoins(sale.totalNativeWei ?? "0", symbol)}`;
  }
  const [kind, body] = event.transfer
    ? ["transfer", event.transfer]
    : event.ownership
      ? ["ownership", event.ownership]
      : ["sale", event.sale];
  if (body === undefined) return `#${event.cursor} (an event of a kind this version does not know)`;
  const { place } = body;
  const token = `${short(place.contractAddress)}/${place.tokenId}`;
  const head = `${place.blockTimestamp}  #${place.blockNumber}  ${kind.padEnd(9)} ${token}`;
  if (kind === "transfer") {
    return `${head}  ${short(body.fromAddress)} → ${short(body.toAddress)}  ×${body.quantity}`;
  }
  if (kind === "ownership") {
    const delta = body.delta ?? "0";
    return `${head}  ${short(body.holderAddress)} ${delta.startsWith("-") ? delta : `+${delta}`}`;
  }
  const usd = body.totalUsd ? ` ($${Number(body.totalUsd).toFixed(2)})` : "";
  const market = body.market ? ` on ${body.market}` : "";
  const trade = body.trade === "sale" ? "" : ` [${body.trade}]`;
  return `${head}  ${short(body.sellerAddress)} → ${short(body.buyerAddress)}  ${formatCoins(body.totalNativeWei ?? "0", symbol)}${usd}${market}${trade}`;
}

export function registerWatchCommand(program: Command, environment: Environment, lifecycle: Lifecycle): void {
  program
    .command("watch")
    .description(
      "follow the live event stream over gRPC: one line per transfer, ownership change and sale as it is indexed",
    )
    .option("--address <host:port>", "the gRPC listener", "localhost:50051")
    .option("--key-file <file>", "a file holding the API key (default: env MINTLENS_API_KEY)")
    .option("--ca <file>", "PEM certificate to trust: the server's self-signed one, or its CA")
    .option("--contract <0x…>", "only this collection (repeat for more)", collect, [])
    .option("--kind <kind>", "only sale, transfer or ownership events (repeat for more)", collect, [])
    .option(
      "--holder, --address-filter <0x…>",
      "only events of this address: sender, recipient, holder, buyer or seller (repeat for more)",
      collect,
      [],
    )
    .option("--after <cursor>", "start after this cursor, or now", "now")
    .option("--confirmations <n>", "only events this many blocks below the indexed head (confirmed mode)")
    .option("--exclude-spam", "leave out the events of collections judged spam")
    .option("--symbol <symbol>", "the native coin's symbol, for prices", "ETH")
    .option("--json", "print each event's JSON instead, one per line")
    .action(async (flags: WatchFlags) => {
      const kinds = flags.kind.map((k) => {
        const name = KINDS[k.toLowerCase()];
        if (name === undefined) throw new UserFacingError(`--kind ${k}: one of sale, transfer, ownership`);
        return name;
      });
      const key =
        flags.keyFile === undefined ? environment.variables.MINTLENS_API_KEY : readKeyFile(flags.keyFile);
      const definition = loadSync("mintlens/v1beta2/stream.proto", {
        includeDirs: [PROTO_ROOT],
        longs: String,
        enums: String,
        defaults: true,
        oneofs: true,
      });
      const loaded = grpc.loadPackageDefinition(definition) as unknown as {
        mintlens: { v1beta2: { StreamService: grpc.ServiceClientConstructor } };
      };
      const ca = flags.ca === undefined ? undefined : readFileSync(flags.ca);
      const client = new loaded.mintlens.v1beta2.StreamService(flags.address, grpc.credentials.createSsl(ca));
      lifecycle.defer(() => client.close());
      const metadata = new grpc.Metadata();
      if (key) metadata.set("x-api-key", key);
      let after = flags.after;
      let backoff = FIRST_BACKOFF_MS;
      const stop = lifecycle.signal;
      while (!stop.aborted) {
        const request = {
          kinds,
          contractAddresses: flags.contract,
          addresses: flags.addressFilter ?? flags.holder ?? [],
          after,
          excludeSpam: flags.excludeSpam === true,
          ...(flags.confirmations === undefined
            ? {}
            : { mode: "STREAM_MODE_CONFIRMED", confirmations: Number(flags.confirmations) }),
        };
        const stream = (
          client as unknown as {
            streamEvents(r: unknown, m: grpc.Metadata): grpc.ClientReadableStream<WireBatch>;
          }
        ).streamEvents(request, metadata);
        const cancel = () => stream.cancel();
        stop.addEventListener("abort", cancel, { once: true });
        const ended = await new Promise<grpc.ServiceError | undefined>((resolve) => {
          stream.on("data", (batch: WireBatch) => {
            for (const event of batch.events) {
              environment.stdout.write(
                `${flags.json ? JSON.stringify(event) : watchLine(event, flags.symbol)}\n`,
              );
            }
            // Resumes after what was shown, and past what the filters left out.
            after = batch.nextCursor;
            backoff = FIRST_BACKOFF_MS;
          });
          stream.on("error", (error: grpc.ServiceError) => resolve(error));
          stream.on("end", () => resolve(undefined));
        });
        stop.removeEventListener("abort", cancel);
        if (stop.aborted) return;
        if (ended !== undefined && FATAL.has(ended.code)) {
          throw new UserFacingError(`${grpc.status[ended.code] ?? ended.code}: ${ended.details}`);
        }
        const why = ended === undefined ? "the stream ended" : `${grpc.status[ended.code]}: ${ended.details}`;
        environment.stderr.write(
          `mintlens watch: ${why}; reconnecting in ${(backoff / 1000).toFixed(1)} s from cursor ${after}\n`,
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, backoff);
          function done() {
            clearTimeout(timer);
            stop.removeEventListener("abort", done);
            resolve();
          }
          stop.addEventListener("abort", done, { once: true });
        });
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      }
    });
}
