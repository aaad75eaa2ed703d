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
      json ??= Buffer.from(wireJsonWriter(schema)(message), "utf8");
      return json;
    },
  };
}

export interface ResponseCache {
  /** The cached answer of `key`, or the one `read` makes (stored, and shared by concurrent askers). */
  get(key: string, read: () => Promise<Answer>): Promise<Answer>;
}

/** At most `maxBytes` of answers (their JSON's length); 0 turns caching off. */
export function createResponseCache(maxBytes: number): ResponseCache {
  if (maxBytes <= 0) return { get: (_key, read) => read() };
  const cache = new LRUCache<string, Answer>({
    maxSize: maxBytes,
    // Sized by the JSON, which a REST answer needs anyway; an answer larger than the cache is not kept.
    sizeCalculation: (value) => Math.max(1, value.json().length),
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
