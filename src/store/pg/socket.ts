import { connect, type Socket } from "node:net";

/** The connection options postgres.js passes to a custom socket factory (after parsing the URL). */
export interface SocketTarget {
  host: readonly string[];
  port: readonly number[];
  path?: string | false;
  connect_timeout?: number;
}

/**
 * Opens the database connection with Nagle's algorithm off. A COPY ends with a tiny CopyDone
 * message written after its data; with Nagle on, the kernel holds it until the server
 * acknowledges the data, and the server delays that acknowledgement by up to 40 ms: every COPY
 * would sit idle that long. Hosts are tried in order, as postgres.js does with a multi-host URL.
 */
export async function openNoDelaySocket(target: SocketTarget): Promise<Socket> {
  const timeoutMs = (target.connect_timeout ?? 30) * 1000;
  if (target.path) return openOne({ path: target.path }, timeoutMs);
  let lastError: unknown;
  for (let i = 0; i < target.host.length; i++) {
    const host = target.host[i] as string;
    const port = target.port[i] ?? target.port[0] ?? 5432;
    try {
      return await openOne({ host, port }, timeoutMs);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError ?? new Error("no database host given");
}

function openOne(
  address: { path: string } | { host: string; port: number },
  timeoutMs: number,
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ ...address, noDelay: true });
    const timer = setTimeout(() => {
      socket.destroy();
      const where = "path" in address ? address.path : `${address.host}:${address.port}`;
      reject(new Error(`connection to ${where} timed out after ${timeoutMs / 1000} s`));
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeListener("error", onError);
      resolve(socket);
    });
    const onError = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    socket.once("error", onError);
  });
}
