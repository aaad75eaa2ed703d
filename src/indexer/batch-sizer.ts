/**
 * Chooses how many blocks the next batch spans so that batches carry roughly `targetEvents`
 * logs: big enough to amortise a transaction, small enough that fetching and writing overlap.
 */
export class BatchSizer {
  private blocksPerEvent: number | undefined;
  private lastBlocks: number | undefined;

  constructor(
    private readonly targetEvents: number,
    private readonly maxBlocks: number,
    private readonly initialBlocks = 16,
  ) {}

  next(): number {
    if (this.blocksPerEvent === undefined) return Math.min(this.initialBlocks, this.maxBlocks);
    const blocks = Math.floor(this.targetEvents * this.blocksPerEvent);
    // Grows at most twofold a batch: a sparse stretch must not send one huge batch into a dense
    // one (a range full of deployments) before its density is seen.
    const ceiling = 2 * (this.lastBlocks ?? this.initialBlocks);
    return Math.max(1, Math.min(this.maxBlocks, blocks, ceiling));
  }

  observe(blocks: number, events: number): void {
    this.lastBlocks = blocks;
    // Density of the range just read, smoothed so that one dense block does not stall a sparse chain.
    const density = blocks / Math.max(events, 1);
    this.blocksPerEvent =
      this.blocksPerEvent === undefined
        ? density
        : Math.exp(0.5 * Math.log(this.blocksPerEvent) + 0.5 * Math.log(density));
  }
}
