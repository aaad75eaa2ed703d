/**
 * The machine's shared CPU lock, taken around each measuring phase as `flock <file> <command>`
 * would take it around a command. flock(1) locks an open file description, and one inherited from
 * this process is shared with it: `flock -x 3` on our descriptor leaves the lock held by this
 * process once it exits, until the descriptor is closed. So the build and the restores between
 * phases run without it, and other work on the machine can take it between phases.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";

export interface CpuLock {
  /** Runs `work` holding the lock, waiting for it first. */
  holding<T>(label: string, work: () => Promise<T>): Promise<T>;
}

export function cpuLock(file: string | undefined, log: (message: string) => void): CpuLock {
  return {
    async holding(label, work) {
      if (file === undefined) return work();
      const fd = openSync(file, "a");
      try {
        if (!(await flock(fd, ["-n", "-x"]))) {
          log(`  waiting for the CPU lock ${file} (${label})`);
          if (!(await flock(fd, ["-x"]))) throw new Error(`flock could not take ${file}`);
        }
        return await work();
      } finally {
        closeSync(fd);
      }
    },
  };
}

function flock(fd: number, flags: string[]): Promise<boolean> {
  return new Promise((done, fail) => {
    const child = spawn("flock", [...flags, "3"], { stdio: ["ignore", "ignore", "inherit", fd] });
    child.once("error", fail);
    child.once("exit", (code) => done(code === 0));
  });
}
