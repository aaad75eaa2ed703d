import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's CPU times: 100 on every Linux the benchmark runs on. */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  /** User plus system CPU seconds. */
  cpu: number;
  /** The same for children that have exited and been waited for. */
  exitedChildren: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces: fields are counted after it.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return {
      pid,
      ppid: Number(fields[1]),
      cpu: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
      exitedChildren: (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND,
    };
  } catch {
    return undefined;
  }
}

/** CPU seconds used so far by one process (not its children); 0 when it cannot be read. */
export function processCpu(pid: number): number {
  return readStat(pid)?.cpu ?? 0;
}

/**
 * CPU seconds used so far by a process and its children, live or exited (a PostgreSQL server's
 * backends are children of its postmaster). Linux only; elsewhere it reads nothing and answers 0.
 *
 * A child reaped while the children are being read would be in neither part (gone from /proc,
 * not yet in the root's count when the root was read), or in both: the root is read before and
 * after the children, and the reading is taken again until no child was reaped in between.
 */
export function processTreeCpu(rootPid: number): number {
  for (let attempt = 0; ; attempt++) {
    const before = readStat(rootPid);
    if (before === undefined) return 0;
    let children = 0;
    try {
      for (const name of readdirSync("/proc")) {
        if (!/^\d+$/.test(name)) continue;
        const stat = readStat(Number(name));
        if (stat !== undefined && stat.ppid === rootPid) children += stat.cpu;
      }
    } catch {
      return 0;
    }
    const after = readStat(rootPid);
    if (after === undefined) return 0;
    if (after.exitedChildren === before.exitedChildren || attempt >= 20) {
      return after.cpu + after.exitedChildren + children;
    }
  }
}
