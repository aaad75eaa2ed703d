/** What every page reads: the API client and the newest block the API has reported. */
import { createContext } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";
import type { ApiClient, ApiError } from "./api.ts";

export interface Session {
  client: ApiClient;
  /** The newest block any answer reflected: pages fetch again when it moves. */
  block: number | undefined;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === undefined) throw new Error("no session");
  return session;
}

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  /** True until the first answer for this path; a refresh keeps the data shown meanwhile. */
  loading: boolean;
}

/**
 * The answer to a GET of `path` (none while `path` is null), fetched again whenever the block
 * moves: the page shows what was indexed since, without a reload. The previous answer stays on
 * the page until the new one arrives, so nothing flickers, and stays when a refresh fails.
 */
export function useApi<T>(path: string | null): Loaded<T> {
  const { client, block } = useSession();
  const [state, setState] = useState<Loaded<T>>({
    data: undefined,
    error: undefined,
    loading: path !== null,
  });
  const shown = useRef<string | null>(null);
  useEffect(() => {
    if (path === null) {
      setState({ data: undefined, error: undefined, loading: false });
      return;
    }
    if (shown.current !== path) setState({ data: undefined, error: undefined, loading: true });
    shown.current = path;
    const abort = new AbortController();
    client.get<T>(path, abort.signal).then(
      (data) => {
        if (!abort.signal.aborted) setState({ data, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (abort.signal.aborted) return;
        // A refresh that fails keeps the data shown: the header says the API is unreachable.
        setState((before) =>
          before.data !== undefined && shown.current === path
            ? before
            : { data: undefined, error: error as ApiError, loading: false },
        );
      },
    );
    return () => abort.abort();
  }, [client, path, block]);
  return state;
}
