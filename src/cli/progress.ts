import cliProgress from "cli-progress";
import type { Output } from "../config/environment.ts";
import type { Logger } from "../core/logger.ts";
import type { Progress } from "../indexer/chain-indexer.ts";

export interface ProgressDisplay {
  update(progress: Progress): void;
  /** Prints a line of text without breaking the bars. */
  print(line: string): void;
  stop(): void;
}

interface RateWindow {
  at: number;
  blocks: number;
  transfers: number;
}

/** Rates over the last ~10 seconds, so the display reflects now rather than the whole run. */
class Rates {
  private readonly samples: RateWindow[] = [];

  add(progress: Progress): { blocksPerSec: number; transfersPerSec: number } {
    const now = Date.now();
    this.samples.push({ at: now, blocks: progress.blocks, transfers: progress.transfers });
    while (this.samples.length > 2 && now - (this.samples[0] as RateWindow).at > 10_000) this.samples.shift();
    const first = this.samples[0] as RateWindow;
    const seconds = Math.max((now - first.at) / 1000, 0.001);
    return {
      blocksPerSec: (progress.blocks - first.blocks) / seconds,
      transfersPerSec: (progress.transfers - first.transfers) / seconds,
    };
  }
}

function eta(behind: number, blocksPerSec: number): string {
  if (behind <= 0) return "at head";
  if (blocksPerSec <= 0) return "-";
  const s = Math.round(behind / blocksPerSec);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h${String(m).padStart(2, "0")}m` : `${m}m${String(s % 60).padStart(2, "0")}s`;
}

/** The logs not indexed so far, when there are any (each is recorded in skipped_logs). */
function skippedNote(progress: Progress): string {
  const skipped = progress.malformed + progress.unclassified + progress.spam;
  return skipped === 0
    ? ""
    : `  skipped: ${progress.malformed} malformed, ${progress.unclassified} unclassified, ${progress.spam} spam`;
}

/** A live bar per chain on a terminal; a structured log line every `intervalMs` otherwise. */
export function createProgressDisplay(logger: Logger, output: Output, intervalMs = 10_000): ProgressDisplay {
  const interactive = output.isTTY === true;
  const rates = new Map<string, Rates>();
  const rateOf = (progress: Progress) => {
    let r = rates.get(progress.chain);
    if (!r) {
      r = new Rates();
      rates.set(progress.chain, r);
    }
    return r.add(progress);
  };

  if (!interactive) {
    const lastLog = new Map<string, number>();
    return {
      update(progress) {
        const rate = rateOf(progress);
        const now = Date.now();
        if (now - (lastLog.get(progress.chain) ?? 0) < intervalMs) return;
        lastLog.set(progress.chain, now);
        const behind = Math.max(0, progress.target + 1 - progress.nextBlock);
        logger.info(
          {
            chain: progress.chain,
            phase: progress.phase,
            block: progress.nextBlock - 1,
            head: progress.head,
            behind,
            blocksPerSec: Math.round(rate.blocksPerSec),
            eventsPerSec: Math.round(rate.transfersPerSec),
            eta: eta(behind, rate.blocksPerSec),
            transfers: progress.transfers,
            malformed: progress.malformed,
            unclassified: progress.unclassified,
            spam: progress.spam,
          },
          "progress",
        );
      },
      print(line) {
        output.write(`${line}\n`);
      },
      stop() {},
    };
  }

  const multibar = new cliProgress.MultiBar(
    {
      format:
        "{chain} |{bar}| block {block} / {target}  {blocksPerSec} blocks/s  {eventsPerSec} events/s  {behind} behind  ETA {remaining}{skipped}",
      hideCursor: true,
      clearOnComplete: false,
      stream: output,
      fps: 4,
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, cliProgress.SingleBar>();
  return {
    update(progress) {
      const rate = rateOf(progress);
      const behind = Math.max(0, progress.target + 1 - progress.nextBlock);
      const payload = {
        chain: progress.chain.padEnd(9),
        block: progress.nextBlock - 1,
        target: progress.target,
        blocksPerSec: Math.round(rate.blocksPerSec),
        eventsPerSec: Math.round(rate.transfersPerSec),
        behind,
        // Not "eta": cli-progress fills that key with its own estimate of the bar's value.
        remaining: eta(behind, rate.blocksPerSec),
        skipped: skippedNote(progress),
      };
      let bar = bars.get(progress.chain);
      if (!bar) {
        bar = multibar.create(Math.max(progress.target, 1), Math.max(progress.nextBlock - 1, 0), payload);
        bars.set(progress.chain, bar);
      }
      bar.setTotal(Math.max(progress.target, 1));
      bar.update(Math.max(progress.nextBlock - 1, 0), payload);
    },
    print(line) {
      multibar.log(`${line}\n`);
    },
    stop() {
      multibar.stop();
    },
  };
}
