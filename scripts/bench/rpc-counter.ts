/**
 * A JSON-RPC proxy on 127.0.0.1 that counts the calls passing through it, by method. It runs in a
 * process of its own, so that its CPU and memory stay out of the process being measured, and the
 * indexer talks to it as to any node: the product code is measured unchanged.
 */
import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

export interface RpcCounts {
  /** HTTP requests (a JSON-RPC batch is one). */
  requests: number;
  /** JSON-RPC calls by method. */
  calls: Record<string, number>;
}

export interface RpcCounter {
  /** Where to send JSON-RPC instead of the node. */
  url: string;
  pid: number;
  /** What has passed through since the start or the last reset. */
  counts(): Promise<RpcCounts>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

const COUNTS_PATH = "/__counts";
const RESET_PATH = "/__reset";
/** Far above any request the indexer sends; a larger one is refused rather than buffered. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** Starts the proxy in front of `upstream` (a node's JSON-RPC URL). */
export async function startRpcCounter(upstream: string): Promise<RpcCounter> {
  const script = fileURLToPath(import.meta.url);
  const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, upstream], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await waitForPort(child);
  const url = `http://127.0.0.1:${port}`;
  const control = async (path: string, method: "GET" | "POST"): Promise<unknown> => {
    const response = await fetch(`${url}${path}`, { method });
    if (!response.ok) throw new Error(`the RPC counter answered HTTP ${response.status} to ${path}`);
    return response.json();
  };
  return {
    url,
    pid: child.pid ?? -1,
    counts: async () => (await control(COUNTS_PATH, "GET")) as RpcCounts,
    reset: async () => {
      await control(RESET_PATH, "POST");
    },
    stop: () => stopChild(child),
  };
}

function waitForPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the RPC counter did not start within ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the RPC counter exited with code ${code}`));
    });
    const stdout = child.stdout;
    if (!stdout) return;
    createInterface({ input: stdout }).once("line", (line) => {
      const match = /^listening (\d+)$/.exec(line);
      clearTimeout(timer);
      child.removeAllListeners("exit");
      if (match?.[1]) resolve(Number(match[1]));
      else {
        child.kill("SIGKILL");
        reject(new Error(`the RPC counter said ${line}`));
      }
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

function countCalls(body: Buffer, counts: RpcCounts): void {
  counts.requests++;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    parsed = undefined;
  }
  const calls = Array.isArray(parsed) ? parsed : [parsed];
  for (const call of calls) {
    const method = (call as { method?: unknown } | undefined)?.method;
    const name = typeof method === "string" ? method : "(not JSON-RPC)";
    counts.calls[name] = (counts.calls[name] ?? 0) + 1;
  }
}

function serve(upstream: URL): void {
  // Kept-alive connections, as the indexer's own to a node: no connection set-up per request.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let counts: RpcCounts = { requests: 0, calls: {} };
  const server = http.createServer((req, res) => {
    if (req.url === COUNTS_PATH) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(counts));
      return;
    }
    if (req.url === RESET_PATH) {
      counts = { requests: 0, calls: {} };
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end();
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      countCalls(body, counts);
      const forward = http.request(
        upstream,
        {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": body.length },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, {
            "content-type": answer.headers["content-type"] ?? "application/json",
          });
          answer.pipe(res);
        },
      );
      forward.on("error", () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      forward.end(body);
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    process.stdout.write(`listening ${port}\n`);
  });
  process.once("SIGTERM", () => {
    server.close();
    server.closeAllConnections();
    agent.destroy();
  });
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const upstream = process.argv[2];
  if (!upstream) throw new Error("usage: rpc-counter.ts <upstream JSON-RPC URL>");
  serve(new URL(upstream));
}
