/**
 * The dashboard's one way to the API: GET requests with the user's key in the `X-API-Key` header,
 * a few at a time, a 429 retried after the `Retry-After` it names, and the block each answer
 * reflects (`Mintlens-Block`) reported to whoever watches for new blocks.
 */

/** What went wrong, sorted by what the page should say. */
export type ApiFailure =
  /** The key was refused: ask for another. */
  | "unauthenticated"
  /** The thing asked for does not exist (an NFT never minted, a contract never seen). */
  | "not-found"
  /** The request itself was refused (a bad address, a period longer than its duration). */
  | "invalid"
  /** The API did not answer: the server is down or the network is. */
  | "unreachable"
  /** The API answered with an error of its own. */
  | "server";

export class ApiError extends Error {
  constructor(
    readonly failure: ApiFailure,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface ApiClientOptions {
  key: string;
  /** Called with the block of every answer that names one. */
  onBlock(block: number): void;
  /** Called when the key is refused. */
  onUnauthenticated(): void;
  /** Requests in flight at once; the others wait their turn. */
  concurrency?: number;
  /** Times a 429 is retried before it is reported. */
  retries?: number;
}

export interface ApiClient {
  get<T>(path: string, signal?: AbortSignal): Promise<T>;
}

/** The header every answer of the API carries: the block its data reflects. */
export const BLOCK_HEADER = "Mintlens-Block";

/**
 * Few requests at once, because the API allows a burst of 10 per key and 30 a second after it:
 * a page that asked for everything at once would be refused half of it.
 */
const CONCURRENCY = 4;
const RETRIES = 5;
/** When a 429 names no wait, or a nonsense one. */
const DEFAULT_RETRY_SECONDS = 1;

function failureOf(status: number): ApiFailure {
  if (status === 401) return "unauthenticated";
  if (status === 404) return "not-found";
  if (status === 400) return "invalid";
  return "server";
}

/** The seconds a `Retry-After` header asks for (a number of seconds or an HTTP date). */
export function retryAfterSeconds(header: string | null, now: number = Date.now()): number {
  if (header === null) return DEFAULT_RETRY_SECONDS;
  const seconds = Number(header);
  if (header.trim() !== "" && Number.isFinite(seconds))
    return seconds >= 0 ? Math.min(seconds, 60) : DEFAULT_RETRY_SECONDS;
  const date = Date.parse(header);
  if (Number.isNaN(date)) return DEFAULT_RETRY_SECONDS;
  return Math.min(Math.max(0, (date - now) / 1000), 60);
}

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const limit = options.concurrency ?? CONCURRENCY;
  const retries = options.retries ?? RETRIES;
  let running = 0;
  const waiting: (() => void)[] = [];
  const acquire = async () => {
    if (running < limit) {
      running++;
      return;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };

  const once = async (path: string, signal?: AbortSignal): Promise<Response> => {
    await acquire();
    try {
      signal?.throwIfAborted();
      // Never from the browser's cache: a page fetched again after a new block wants the new data.
      const init = { headers: { "X-API-Key": options.key }, signal, cache: "no-store" } as RequestInit;
      return await fetch(path, init);
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ApiError("unreachable", "The API cannot be reached: is Mintlens running?", 0);
    } finally {
      release();
    }
  };

  return {
    async get<T>(path: string, signal?: AbortSignal): Promise<T> {
      for (let attempt = 0; ; attempt++) {
        const response = await once(path, signal);
        const block = Number(response.headers.get(BLOCK_HEADER));
        if (response.headers.has(BLOCK_HEADER) && Number.isSafeInteger(block)) options.onBlock(block);
        if (response.ok) return (await response.json()) as T;
        if (response.status === 429 && attempt < retries) {
          await response.body?.cancel();
          await wait(retryAfterSeconds(response.headers.get("Retry-After")) * 1000, signal);
          continue;
        }
        let message = `${response.status} ${response.statusText}`;
        try {
          const body = (await response.json()) as { message?: unknown };
          if (typeof body.message === "string") message = body.message;
        } catch {
          // Not the API's JSON error (a proxy's page, say): the status says enough.
        }
        if (response.status === 401) options.onUnauthenticated();
        throw new ApiError(failureOf(response.status), message, response.status);
      }
    },
  };
}
