/** Calls `stop` on the first SIGINT or SIGTERM; a second one exits at once. Returns a remover. */
export function onShutdown(stop: () => void): () => void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(signal === "SIGINT" ? 130 : 143);
    stopping = true;
    stop();
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}
