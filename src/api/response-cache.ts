/**
 * Answers kept in memory, keyed by the chain's data version, the operation and its checked
 * request, so that the same question asked again before the data changes is answered without the
 * database. The version in the key makes every entry of an older version unreachable at once (they
 * age out of the LRU); an answer is therefore never older than one poll of the version.
 */
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { LRUCache } from "lru-cache";
import { wireJsonWriter } from "./wire-json.ts";

/** An operation's answer: its message (gRPC) and, written once on first use, its JSON in UTF-8 (REST). */
export interface Answer {
  message: MessageShape<DescMessage>;
  json(): Buffer;
}

export function answer(schema: DescMessage, message: MessageShape<DescMessage>): Answer {
  let json: Buffer | undefined;
  return {
    message,
    json() {
      // A buffer of its own size: `Buffer.from(string)` would place a small answer in a shared 8 KiB
      // slab and keep the whole slab alive as long as the answer is cached.
      json ??= Buffer.from(new TextEncoder().encode(wireJsonWriter(schema)(message)).buffer);
      return json;
    },
  };
}

export interface ResponseCache {
  /** The cached answer of `key`, or the one `read` makes (stored, and shared by concurrent askers). */
  get(key: string, read: () => Promise<Answer>): Promise<Answer>;
}

/**
 * What a cached answer holds besides its JSON, as measured in an API process with hundreds of
 * answers cached (`npm run bench:cache-memory`: heap and external memory, collected, before and
 * after): its message's objects, about 1.4 bytes per byte of JSON in a page of transfers; and
 * about 2 KiB an entry whatever its size (the LRU's node, the answer's closure, a small message's
 * objects). Sized by the JSON alone, a cache of pages held 2.5 times its size, and of small answers
 * twenty.
 */
export const MESSAGE_BYTES_PER_JSON_BYTE = 1.4;
export const ENTRY_BYTES = 2_048;

/** The memory an answer cached under `key` holds, by the measure above. */
export function cachedSize(key: string, value: Answer): number {
  return ENTRY_BYTES + key.length + Math.ceil(value.json().length * (1 + MESSAGE_BYTES_PER_JSON_BYTE));
}

/** At most about `maxBytes` of memory for answers (see `cachedSize`); 0 turns caching off. */
export function createResponseCache(maxBytes: number): ResponseCache {
  if (maxBytes <= 0) return { get: (_key, read) => read() };
  const cache = new LRUCache<string, Answer>({
    maxSize: maxBytes,
    // The JSON is written anyway: a REST answer is it, and a gRPC one is charged by its length.
    // An answer larger than an eighth of the cache is not kept.
    sizeCalculation: (value, key) => cachedSize(key, value),
    maxEntrySize: Math.max(1, Math.floor(maxBytes / 8)),
  });
  const pending = new Map<string, Promise<Answer>>();
  return {
    async get(key, read) {
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
      const running = pending.get(key);
      if (running !== undefined) return running;
      const promise = read()
        .then((value) => {
          cache.set(key, value);
          return value;
        })
        .finally(() => pending.delete(key));
      pending.set(key, promise);
      return promise;
    },
  };
}
