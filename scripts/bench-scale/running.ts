/** What the benchmark has running (servers, the API process), stopped on a signal or at the end, newest first. */
const running = new Set<() => Promise<void>>();

export async function started<T extends { stop(): Promise<void> }>(thing: Promise<T>): Promise<T> {
  const it = await thing;
  const stop = it.stop;
  const once = async () => {
    running.delete(once);
    await stop();
  };
  running.add(once);
  it.stop = once;
  return it;
}

export async function stopEverything(): Promise<void> {
  for (const stop of [...running].reverse()) await stop().catch(() => {});
}
