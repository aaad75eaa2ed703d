/**
 * The metadata worker of one chain: takes due tokens from the queue, asks each contract for the
 * token's URI, resolves it, fetches the document safely (or decodes it in place), sniffs its
 * media type, normalises it, and stores the outcome. The indexer never waits for it: its batches
 * record where tokens were minted (and queue updated ones), and the worker queues a range of newly
 * minted tokens whenever its queue runs low.
 *
 * - At most `concurrency` tokens are worked on at once, taken round-robin across contracts (none
 *   holding more than `perContract`), and at most `perHost` fetches run against any one host: a
 *   token whose host has no free slot, or is failing (its circuit breaker open), is handed back to
 *   the queue unfetched, its slot freed for another token.
 * - Outcomes: a document (`ok`); no metadata to fetch (`none`: no token URI, an unsupported
 *   location), final; a refusal (`failed`: a refused address, a 404, too large, a value the store
 *   refused), tried again after 1 h, 6 h and 24 h, then final; a temporary failure (a timeout, a
 *   5xx, the node or the database down) tried again with a backoff from 30 s to 6 h, and after 8
 *   failed attempts in all stored as `failed`, final. A final token leaves the queue: an EIP-4906
 *   update or an operator's refresh queues it again.
 */
import type { ChainClient } from "../chain/rpc-types.ts";
import { errorMessage } from "../core/errors.ts";
import type { Address } from "../core/hex.ts";
import type { Logger } from "../core/logger.ts";
import type { BlobStore } from "../media/blobs.ts";
import type { Queryable } from "../store/pg/database.ts";
import {
  EMPTY_OUTCOME,
  handBack,
  type MetadataOutcome,
  pullMintRange,
  type QueuedToken,
  retryLater,
  storeOutcome,
  storeRefusedValue,
  type TakeShares,
  takeDueTokens,
} from "../store/tables/metadata.ts";
import { DEFAULT_RANKING_POLICY, type RankingPolicy, rankDueCollections } from "../store/tables/rarity.ts";
import { readDocument } from "./document.ts";
import { type Fetcher, FetchFailed, FetchRefused } from "./fetch.ts";
import { type BreakerSettings, createHostGate, HostNotTaken } from "./host-gate.ts";
import { normaliseMetadata } from "./normalise.ts";
import { isMediaType, sniffMediaType } from "./sniff.ts";
import { readTokenUri } from "./token-uri.ts";
import { DEFAULT_GATEWAYS, type Gateways, resolveUri } from "./uri.ts";

export interface MetadataWorkerOptions {
  sql: Queryable;
  chainId: number;
  client: Pick<ChainClient, "call">;
  fetcher: Fetcher;
  logger: Logger;
  gateways?: Gateways;
  concurrency?: number;
  perHost?: number;
  /** Tokens of one contract worked on at once; half of `concurrency` unless given. */
  perContract?: number;
  /** How long to wait when the queue has nothing due, in ms. */
  idleMs?: number;
  /** Where images are cached; without it images are not fetched. */
  blobs?: BlobStore;
  /** When hosts failing in a row are left alone, and for how long; `BREAKER` unless given. */
  breaker?: BreakerSettings;
  /** Called after each token is worked on, with what became of it. */
  onToken?: (token: QueuedToken, status: TokenStatus) => void;
  /** When collections whose traits changed are ranked again; `DEFAULT_RANKING_POLICY` unless given. */
  ranking?: Partial<RankingPolicy>;
  /** How often to look for collections to rank, in ms: default 2,000. */
  rankEveryMs?: number;
}

/**
 * What became of a token taken from the queue: its outcome stored (`ok`, `none`, `failed`),
 * queued again after a temporary failure (`retry`), handed back unfetched because its host was
 * busy or failing (`deferred`, not counted as an attempt), or gone from the queue meanwhile
 * (`dropped`: a reorganisation took it away).
 */
export type TokenStatus = MetadataOutcome["status"] | "retry" | "deferred" | "dropped";

/** How long a take holds its tokens: a worker that dies leaves them due again after this. */
export const LEASE_SECONDS = 300;
/** Failed attempts of every kind a token is allowed; the last one stores it `failed` and it leaves the queue. */
export const MAX_ATTEMPTS = 8;
/**
 * The waits after a token's first, second and third refusal (1 h, 6 h, 24 h): the fourth refusal
 * stores it `failed` and it leaves the queue.
 */
export const REFUSAL_RETRY_SECONDS: readonly number[] = [3_600, 6 * 3_600, 24 * 3_600];
/** Refusals a token is allowed: the last stores it `failed` for good. */
export const MAX_REFUSALS = REFUSAL_RETRY_SECONDS.length + 1;
/** How soon a token handed back because its host had no free slot comes due again. */
export const BUSY_RETRY_SECONDS = 2;
/** Contracts whose last token's host is remembered, to take no more of them than the host has room for. */
export const MAX_REMEMBERED_CONTRACTS = 10_000;

/** The wait before the next try of a token that failed `attempts` times before: 30 s doubling, at most 6 h. */
export function backoffSeconds(attempts: number): number {
  return Math.min(30 * 2 ** attempts, 6 * 3_600);
}

/** The wait before the next try of a token refused `refusals` times before; undefined once its refusals are spent. */
export function refusalRetrySeconds(refusals: number, attempts: number): number | undefined {
  if (attempts + 1 >= MAX_ATTEMPTS) return undefined;
  return REFUSAL_RETRY_SECONDS[refusals];
}

/** Runs a fetch on a host's slot; the worker gives each token its own, which admits its first fetch without waiting. */
type OnHost = <T>(host: string, task: () => Promise<T>) => Promise<T>;

interface Finding {
  client: Pick<ChainClient, "call">;
  fetcher: Fetcher;
  gateways: Gateways;
  perHost: OnHost;
  blobs?: BlobStore | undefined;
  /** The image cache refused or could not be reached: an operator's problem, unlike a missing image. */
  onBlobStoreError?: ((error: unknown) => void) | undefined;
}

/** The bytes at a location (fetched safely, or decoded in place), with where they came from. */
async function load(
  location: string,
  tokenId: bigint,
  o: Finding,
  kind: "document" | "image",
): Promise<{ body: Uint8Array; declared: string; from: string } | { none: string }> {
  const resolved = resolveUri(location, tokenId, o.gateways);
  if (resolved.kind === "none") return { none: resolved.reason };
  if (resolved.kind === "inline")
    return { body: resolved.body, declared: resolved.mediaType, from: location };
  const fetched = await o.perHost(new URL(resolved.url).host, () => o.fetcher.fetch(resolved.url, { kind }));
  return { body: fetched.body, declared: fetched.declaredType, from: fetched.url };
}

const isMedia = isMediaType;

/**
 * The image cached in the blob store: its path as the API serves it (`/images/<sha256>`) and its
 * sniffed media type. An image that cannot be had leaves the document as it is: the image is
 * tried again with the next refresh.
 */
async function cacheImage(
  location: string,
  tokenId: bigint,
  o: Finding,
): Promise<{ uri: string; mimeType: string } | undefined> {
  if (o.blobs === undefined || location === "") return undefined;
  let loaded: Awaited<ReturnType<typeof load>>;
  try {
    loaded = await load(location, tokenId, o, "image");
  } catch {
    return undefined;
  }
  if ("none" in loaded) return undefined;
  const mimeType = sniffMediaType(loaded.body, loaded.declared);
  if (!isMedia(mimeType)) return undefined;
  try {
    return { uri: `/images/${await o.blobs.put(loaded.body, mimeType)}`, mimeType };
  } catch (error) {
    o.onBlobStoreError?.(error);
    return undefined;
  }
}

/** What one token's metadata is, found from the chain and the web. Throws FetchFailed (and chain errors) to retry. */
export async function findMetadata(token: QueuedToken, o: Finding): Promise<MetadataOutcome> {
  const found = await readTokenUri(o.client, token.contract, token.tokenId, token.types);
  if ("none" in found) return { ...EMPTY_OUTCOME, status: "none", error: found.none };
  let loaded: Awaited<ReturnType<typeof load>>;
  try {
    loaded = await load(found.uri, token.tokenId, o, "document");
  } catch (error) {
    if (error instanceof FetchRefused)
      return { ...EMPTY_OUTCOME, status: "failed", error: error.message, tokenUri: found.uri };
    throw error;
  }
  if ("none" in loaded) return { ...EMPTY_OUTCOME, status: "none", error: loaded.none, tokenUri: found.uri };
  const mimeType = sniffMediaType(loaded.body, loaded.declared);
  const fetched = {
    ...EMPTY_OUTCOME,
    status: "ok" as const,
    tokenUri: found.uri,
    uri: loaded.from,
    mimeType,
  };
  // A token URI that is the image itself: no document, the URI is the image.
  if (isMedia(mimeType)) {
    return { ...fetched, raw: "", ...(await imageOf(found.uri, token.tokenId, o)) };
  }
  const document = readDocument(loaded.body, mimeType);
  // Binary, or beyond the limits: not kept, like a body too large; tried again after a while.
  if ("refused" in document) return { ...fetched, status: "failed", error: document.refused };
  const raw = document.text;
  const n = normaliseMetadata(raw);
  return {
    ...fetched,
    raw,
    name: n.name,
    description: n.description,
    ...(await imageOf(n.image, token.tokenId, o)),
    animationUrl: n.animationUrl,
    externalUrl: n.externalUrl,
    attributes: n.attributes,
  };
}

/** An outcome's image fields: where the image was found, and the cached copy if there is one. */
async function imageOf(
  location: string,
  tokenId: bigint,
  o: Finding,
): Promise<Pick<MetadataOutcome, "imageUriOriginal" | "imageUri" | "imageMimeType">> {
  const image = await cacheImage(location, tokenId, o);
  return { imageUriOriginal: location, imageUri: image?.uri ?? "", imageMimeType: image?.mimeType ?? "" };
}

/** Runs until `signal` aborts: takes due tokens, works on them, stores their outcomes. */
export async function runMetadataWorker(options: MetadataWorkerOptions, signal: AbortSignal): Promise<void> {
  const { sql, chainId, logger } = options;
  const concurrency = options.concurrency ?? 16;
  const perHost = options.perHost ?? 4;
  const perContract = options.perContract ?? Math.max(1, Math.ceil(concurrency / 2));
  const gate = createHostGate({ perHost, ...(options.breaker ? { breaker: options.breaker } : {}) });
  const gateways = options.gateways ?? DEFAULT_GATEWAYS;
  const idleMs = options.idleMs ?? 1_000;
  // A take reads the first rows of every queued contract: taken in batches of an eighth of the room.
  const takeBatch = Math.max(1, Math.ceil(concurrency / 8));

  // Woken by a task that ends, by the timer, or by the signal; the listener goes with the wait.
  let nudge: (() => void) | undefined;
  const pause = (ms?: number) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = ms === undefined ? undefined : setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      nudge = done;
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        nudge = undefined;
        resolve();
      }
    });

  // Once a minute at most: a store that is down fails every image.
  let lastWarned = 0;
  let unwarned = 0;
  const blobStoreFailed = (error: unknown) => {
    unwarned++;
    if (Date.now() - lastWarned < 60_000) return;
    lastWarned = Date.now();
    logger.warn(
      { err: error, chainId, images: unwarned },
      "storing token images in the image cache failed; they are left uncached until their next refresh",
    );
    unwarned = 0;
  };

  // Tokens under way per contract, and the host each contract's last document came from ("" for a
  // document in place): a contract is not taken beyond what its host has room for. Both bounded:
  // the first by `concurrency`, the second by MAX_REMEMBERED_CONTRACTS, the oldest forgotten.
  const held = new Map<Address, number>();
  const hostOf = new Map<Address, string>();
  const remember = (contract: Address, host: string) => {
    hostOf.delete(contract);
    hostOf.set(contract, host);
    if (hostOf.size > MAX_REMEMBERED_CONTRACTS) hostOf.delete(hostOf.keys().next().value as Address);
  };
  /** A contract's room: `perContract` less what it holds, and no more than its host takes (its first take, a host's slots). */
  const roomOf = (contract: Address, holding: number) => {
    const host = hostOf.get(contract);
    const hostRoom = host === undefined ? perHost : host === "" ? perContract : gate.free(host);
    return Math.max(0, Math.min(perContract - holding, hostRoom));
  };
  const shares = (limit: number): TakeShares => {
    const limited: { contract: Address; room: number; held: number }[] = [];
    for (const [contract, holding] of held) {
      limited.push({ contract, room: roomOf(contract, holding), held: holding });
    }
    for (const contract of hostOf.keys()) {
      if (held.has(contract)) continue;
      const room = roomOf(contract, 0);
      if (room < Math.min(perContract, limit)) limited.push({ contract, room, held: 0 });
    }
    // A contract never seen takes at most `perHost` until its host is known.
    return { perContract: Math.min(perContract, perHost), limited };
  };

  /** A token's way onto hosts: its first fetch (its document) never waits; later ones (images) wait their turn. */
  const onHostFor = (token: QueuedToken) => {
    const state: { fetches: number; notTaken: HostNotTaken | undefined } = {
      fetches: 0,
      notTaken: undefined,
    };
    const run: OnHost = async (host, task) => {
      const first = state.fetches++ === 0;
      if (first) remember(token.contract, host);
      const admission = first ? gate.tryEnter(host) : await gate.enter(host);
      if (!admission.ok) {
        const error = new HostNotTaken(host, admission);
        if (first) state.notTaken = error;
        throw error;
      }
      try {
        const result = await task();
        admission.done("answered");
        return result;
      } catch (error) {
        admission.done(
          error instanceof FetchFailed && !signal.aborted
            ? "failed"
            : error instanceof FetchRefused
              ? "answered"
              : "abandoned",
        );
        throw error;
      }
    };
    return { run, state };
  };

  /** Hands a token back unfetched: due again shortly (busy) or when its host's cool-down ends. */
  const defer = async (token: QueuedToken, notTaken: HostNotTaken): Promise<TokenStatus> => {
    const seconds =
      notTaken.refusal.reason === "busy"
        ? BUSY_RETRY_SECONDS
        : // Spread over a tenth of the wait, so a host's tokens do not all come due at once.
          Math.ceil((notTaken.refusal.retryInMs * (1 + Math.random() / 10)) / 1000) + 1;
    try {
      await handBack(sql, chainId, token, seconds);
    } catch (error) {
      logger.warn(
        { err: error, chainId },
        "handing a token back to the queue failed; it comes due when its lease ends",
      );
    }
    return "deferred";
  };

  /**
   * Stores an outcome. A value the store refuses (SQLSTATE class 22 or 54) is a refusal like a 404:
   * stored `failed` with empty fields and the store's reason. Any other failure (the database
   * unreachable) counts the attempt; when even that cannot be written, the lease's end brings the
   * token back uncounted.
   */
  const store = async (
    token: QueuedToken,
    outcome: MetadataOutcome,
    retryAfterSeconds: number | undefined,
  ): Promise<TokenStatus> => {
    let failure: unknown;
    try {
      const stored = await storeOutcome(sql, chainId, token, outcome, retryAfterSeconds);
      return stored ? outcome.status : "dropped";
    } catch (error) {
      failure = error;
    }
    if (storeRefusedValue(failure)) {
      const refused: MetadataOutcome = {
        ...EMPTY_OUTCOME,
        status: "failed",
        error: `the store refused the outcome: ${errorMessage(failure).replaceAll("\0", "").slice(0, 500)}`,
      };
      try {
        const stored = await storeOutcome(
          sql,
          chainId,
          token,
          refused,
          refusalRetrySeconds(token.refusals, token.attempts),
        );
        return stored ? "failed" : "dropped";
      } catch (error) {
        failure = error;
      }
    }
    logger.warn({ err: failure, chainId }, "storing a token's metadata failed; it is tried again");
    try {
      await retryLater(sql, chainId, token, backoffSeconds(token.attempts), errorMessage(failure));
    } catch (error) {
      logger.warn(
        { err: error, chainId },
        "counting a failed attempt failed; the token comes due when its lease ends",
      );
    }
    return "retry";
  };

  const settle = async (token: QueuedToken): Promise<TokenStatus | undefined> => {
    // Spent before this take (an outcome that could not be stored counted the attempt): not fetched again.
    if (token.attempts >= MAX_ATTEMPTS) {
      return store(
        token,
        { ...EMPTY_OUTCOME, status: "failed", error: `gave up after ${token.attempts} failed attempts` },
        undefined,
      );
    }
    const hosts = onHostFor(token);
    let outcome: MetadataOutcome;
    let spent = false;
    try {
      outcome = await findMetadata(token, {
        client: options.client,
        fetcher: options.fetcher,
        gateways,
        perHost: hosts.run,
        blobs: options.blobs,
        onBlobStoreError: blobStoreFailed,
      });
    } catch (error) {
      if (signal.aborted) return undefined;
      if (error instanceof HostNotTaken) return defer(token, error);
      const message = error instanceof FetchFailed ? error.message : errorMessage(error);
      if (token.attempts + 1 < MAX_ATTEMPTS) {
        await retryLater(sql, chainId, token, backoffSeconds(token.attempts), message);
        return "retry";
      }
      outcome = { ...EMPTY_OUTCOME, status: "failed", error: message };
      spent = true;
    }
    if (hosts.state.fetches === 0) remember(token.contract, "");
    // The first fetch was an image (the document was in place) and its host had no free slot.
    if (hosts.state.notTaken?.refusal.reason === "busy") return defer(token, hosts.state.notTaken);
    const retry =
      outcome.status === "failed" && !spent ? refusalRetrySeconds(token.refusals, token.attempts) : undefined;
    return store(token, outcome, retry);
  };

  const work = async (token: QueuedToken) => {
    const status = await settle(token);
    if (status !== undefined) options.onToken?.(token, status);
  };

  // Ranking runs beside the fetching, one pass at a time, at most every `rankEveryMs`.
  const ranking = { ...DEFAULT_RANKING_POLICY, ...options.ranking };
  const rankEveryMs = options.rankEveryMs ?? 2_000;
  let lastRank = 0;
  let ranker: Promise<void> | undefined;
  const rank = () => {
    if (ranker !== undefined || Date.now() - lastRank < rankEveryMs) return;
    lastRank = Date.now();
    ranker = rankDueCollections(sql, chainId, ranking)
      .then(
        () => undefined,
        (error: unknown) =>
          logger.warn({ err: error, chainId }, "ranking collections by rarity failed; trying again"),
      )
      .finally(() => {
        ranker = undefined;
      });
  };

  const running = new Set<Promise<void>>();
  let lastPull = 0;
  // Where the next take's walk over the queued contracts starts, and whether the last one stopped
  // short of the end: then contracts beyond it may have tokens due even if it found none.
  let cursor: Address | undefined;
  let walkGoesOn = false;
  const walked = (next: Address | undefined) => {
    cursor = next;
    walkGoesOn = next !== undefined;
  };
  while (!signal.aborted) {
    rank();
    const free = concurrency - running.size;
    let taken: QueuedToken[] = [];
    let pulled = false;
    if (free >= takeBatch) {
      try {
        taken = await takeDueTokens(sql, chainId, free, LEASE_SECONDS, {
          ...shares(free),
          after: cursor,
          onWalked: walked,
        });
      } catch (error) {
        logger.warn({ err: error, chainId }, "reading the metadata queue failed; trying again");
        await pause(idleMs);
        continue;
      }
    }
    for (const token of taken) {
      held.set(token.contract, (held.get(token.contract) ?? 0) + 1);
      const task: Promise<void> = work(token)
        .catch((error: unknown) =>
          logger.warn({ err: error, chainId }, "working on a token failed; it comes due when its lease ends"),
        )
        .finally(() => {
          running.delete(task);
          const left = (held.get(token.contract) ?? 1) - 1;
          if (left === 0) held.delete(token.contract);
          else held.set(token.contract, left);
          nudge?.();
        });
      running.add(task);
    }
    // Room left: the next range of newly minted tokens joins the queue, to be taken next round. Room
    // left because the contracts due are at their share moves at most a range a second.
    const idle = taken.length === 0 && running.size === 0;
    if (free >= takeBatch && taken.length < free && (idle || Date.now() - lastPull >= 1_000)) {
      lastPull = Date.now();
      try {
        pulled = (await pullMintRange(sql, chainId)).ranges > 0;
      } catch (error) {
        logger.warn({ err: error, chainId }, "queueing newly minted tokens failed; trying again");
      }
    }
    if (taken.length === 0 && !pulled) {
      if (walkGoesOn && free >= takeBatch) continue;
      // Nothing due (or no room): wait for a task to end, or a while for new tokens.
      await pause(idleMs);
    } else if (concurrency - running.size < takeBatch) {
      await pause();
    }
  }
  await Promise.allSettled(running);
  await ranker;
}
