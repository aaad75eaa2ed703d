/**
 * The metadata worker of one chain: takes due tokens from the queue, asks each contract for the
 * token's URI, resolves it, fetches the document safely (or decodes it in place), sniffs its
 * media type, normalises it, and stores the outcome. The indexer never waits for it: its batches
 * record where tokens were minted (and queue updated ones), and the worker queues a range of newly
 * minted tokens whenever its queue runs low.
 *
 * - At most `concurrency` tokens are worked on at once, and at most `perHost` of them against any
 *   one host, so a collection on one server is not hammered.
 * - Outcomes: a document (`ok`); no metadata to fetch (`none`: no token URI, an unsupported
 *   location), final; a refused fetch (`failed`: a refused address, a 404, too large), tried again
 *   after a week; a temporary failure (a timeout, a 5xx, the node or the database down) tried again
 *   with a backoff from 30 s to 6 h, and after 8 attempts stored as `failed`.
 */
import type { ChainClient } from "../chain/rpc-types.ts";
import { errorMessage } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { BlobStore } from "../media/blobs.ts";
import type { Queryable } from "../store/pg/database.ts";
import {
  EMPTY_OUTCOME,
  type MetadataOutcome,
  pullMintRange,
  type QueuedToken,
  retryLater,
  storeOutcome,
  takeDueTokens,
} from "../store/tables/metadata.ts";
import { readDocument } from "./document.ts";
import { type Fetcher, FetchFailed, FetchRefused } from "./fetch.ts";
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
  /** How long to wait when the queue has nothing due, in ms. */
  idleMs?: number;
  /** Where images are cached; without it images are not fetched. */
  blobs?: BlobStore;
  /** Called after each token is worked on, with what became of it. */
  onToken?: (token: QueuedToken, status: MetadataOutcome["status"] | "retry" | "dropped") => void;
}

const LEASE_SECONDS = 300;
const REFUSED_RETRY_SECONDS = 7 * 86_400;
/** Temporary failures in a row after which a token is stored as `failed`. */
export const MAX_ATTEMPTS = 8;

/** The wait before the next try of a token that failed `attempts` times before: 30 s doubling, at most 6 h. */
export function backoffSeconds(attempts: number): number {
  return Math.min(30 * 2 ** attempts, 6 * 3_600);
}

/** Bounds how many tasks run at once per key. */
function keyedLimit(limit: number) {
  const active = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();
  return async <T>(key: string, task: () => Promise<T>): Promise<T> => {
    if ((active.get(key) ?? 0) >= limit) {
      await new Promise<void>((resolve) => waiting.set(key, [...(waiting.get(key) ?? []), resolve]));
    }
    active.set(key, (active.get(key) ?? 0) + 1);
    try {
      return await task();
    } finally {
      const left = (active.get(key) ?? 1) - 1;
      if (left === 0) active.delete(key);
      else active.set(key, left);
      const next = waiting.get(key)?.shift();
      if (waiting.get(key)?.length === 0) waiting.delete(key);
      next?.();
    }
  };
}

interface Finding {
  client: Pick<ChainClient, "call">;
  fetcher: Fetcher;
  gateways: Gateways;
  perHost: ReturnType<typeof keyedLimit>;
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
  const perHost = keyedLimit(options.perHost ?? 4);
  const gateways = options.gateways ?? DEFAULT_GATEWAYS;
  const idleMs = options.idleMs ?? 1_000;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
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

  const work = async (token: QueuedToken) => {
    let outcome: MetadataOutcome;
    try {
      outcome = await findMetadata(token, {
        client: options.client,
        fetcher: options.fetcher,
        gateways,
        perHost,
        blobs: options.blobs,
        onBlobStoreError: blobStoreFailed,
      });
    } catch (error) {
      if (signal.aborted) return;
      const message = error instanceof FetchFailed ? error.message : errorMessage(error);
      if (token.attempts + 1 < MAX_ATTEMPTS) {
        await retryLater(sql, chainId, token, backoffSeconds(token.attempts), message);
        options.onToken?.(token, "retry");
        return;
      }
      outcome = { ...EMPTY_OUTCOME, status: "failed", error: message };
    }
    const stored = await storeOutcome(
      sql,
      chainId,
      token,
      outcome,
      outcome.status === "failed" ? REFUSED_RETRY_SECONDS : undefined,
    );
    // Dropped: the token left the queue meanwhile (a reorganisation took it away).
    options.onToken?.(token, stored ? outcome.status : "dropped");
  };

  const running = new Set<Promise<void>>();
  while (!signal.aborted) {
    const free = concurrency - running.size;
    let taken: QueuedToken[] = [];
    let pulled = false;
    if (free > 0) {
      try {
        taken = await takeDueTokens(sql, chainId, free, LEASE_SECONDS);
      } catch (error) {
        logger.warn({ err: error, chainId }, "reading the metadata queue failed; trying again");
        await sleep(idleMs);
        continue;
      }
    }
    for (const token of taken) {
      const task: Promise<void> = work(token)
        .catch((error: unknown) =>
          logger.warn({ err: error, chainId }, "storing a token's metadata failed; it comes due again"),
        )
        .finally(() => running.delete(task));
      running.add(task);
    }
    if (free > 0 && taken.length < free) {
      // The queue ran low: the next range of newly minted tokens joins it, to be taken next round.
      try {
        pulled = (await pullMintRange(sql, chainId)).ranges > 0;
      } catch (error) {
        logger.warn({ err: error, chainId }, "queueing newly minted tokens failed; trying again");
      }
    }
    if (taken.length === 0 && !pulled) {
      // Nothing due (or no room): wait for a task to end, or a while for new tokens.
      await Promise.race([sleep(idleMs), ...running]);
    } else if (running.size >= concurrency) {
      await Promise.race(running);
    }
  }
  await Promise.allSettled(running);
}
