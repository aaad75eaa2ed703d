/**
 * Live updates: one cheap request every two seconds while the tab is visible. Its answer, like
 * every answer, names the block its data reflects (`Mintlens-Block`); the client reports it, and
 * the pages fetch again when it moves. (The event stream would push instead, but a browser's
 * EventSource cannot send the key header.)
 */
import type { ApiClient } from "./api.ts";

export type LiveState = "starting" | "live" | "paused" | "offline";

export const POLL_MS = 2_000;
/** The cheapest answer that carries the block: one contract. */
const PROBE = "/foundational/v1beta2/contracts?limit=1";

/** Starts polling; returns the function that stops it. */
export function startLive(client: ApiClient, onState: (state: LiveState) => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const abort = new AbortController();
  const tick = async () => {
    timer = undefined;
    if (stopped) return;
    if (document.visibilityState !== "visible") {
      onState("paused");
      return;
    }
    try {
      await client.get(PROBE, abort.signal);
      onState("live");
    } catch {
      if (stopped) return;
      onState("offline");
    }
    if (!stopped) timer = setTimeout(tick, POLL_MS);
  };
  const onVisibility = () => {
    if (document.visibilityState === "visible" && timer === undefined) void tick();
  };
  document.addEventListener("visibilitychange", onVisibility);
  void tick();
  return () => {
    stopped = true;
    abort.abort();
    if (timer !== undefined) clearTimeout(timer);
    document.removeEventListener("visibilitychange", onVisibility);
  };
}
