/**
 * A bare JSON-RPC client over fetch. The demo generators send thousands of requests to a local
 * anvil; this skips viem's per-request formatting and retry machinery and allows batches.
 */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message}${data === undefined ? "" : ` (${JSON.stringify(data)})`}`);
    this.name = "RpcError";
  }
}

interface JsonRpcResponse {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface RpcCall {
  method: string;
  params: readonly unknown[];
}

export class JsonRpc {
  private nextId = 1;

  constructor(readonly url: string) {}

  async call<T>(method: string, params: readonly unknown[] = []): Promise<T> {
    const [result] = await this.batch<T>([{ method, params }]);
    return result as T;
  }

  /** Sends the calls in one request; results in the same order. Throws the first error. */
  async batch<T>(calls: readonly RpcCall[]): Promise<T[]> {
    if (calls.length === 0) return [];
    const firstId = this.nextId;
    this.nextId += calls.length;
    const body = calls.map((c, i) => ({
      jsonrpc: "2.0",
      id: firstId + i,
      method: c.method,
      params: c.params,
    }));
    const response = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(calls.length === 1 ? body[0] : body),
    });
    if (!response.ok) throw new Error(`${this.url} answered HTTP ${response.status}`);
    const parsed = (await response.json()) as JsonRpcResponse | JsonRpcResponse[];
    const replies = Array.isArray(parsed) ? parsed : [parsed];
    const byId = new Map(replies.map((r) => [r.id, r]));
    return calls.map((c, i) => {
      const reply = byId.get(firstId + i);
      if (!reply) throw new RpcError(c.method, -1, "no reply in batch");
      if (reply.error) throw new RpcError(c.method, reply.error.code, reply.error.message, reply.error.data);
      return reply.result as T;
    });
  }
}
