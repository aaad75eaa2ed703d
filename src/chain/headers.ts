import { numberToHex } from "../core/hex.ts";
import type { BlockHeader } from "../core/types.ts";
import { MalformedAnswerError, NotAvailableYetError } from "./errors.ts";
import { bloom, hash, object, quantity } from "./parse.ts";
import type { RpcTransport } from "./transport.ts";

/** An eth_getBlockByNumber answer as the header of block `n`; null means the node does not have it yet. */
export function parseHeader(result: unknown, n: number): BlockHeader {
  if (result === null) throw new NotAvailableYetError(`block ${n} is not available on the node yet`);
  const block = object(result, `block ${n}`);
  const number = quantity(block.number, `block ${n} number`);
  if (number !== n) throw new MalformedAnswerError(`asked for block ${n}, the node answered block ${number}`);
  return {
    number,
    hash: hash(block.hash, `block ${n} hash`),
    parentHash: hash(block.parentHash, `block ${n} parentHash`),
    timestamp: quantity(block.timestamp, `block ${n} timestamp`),
    logsBloom: bloom(block.logsBloom, `block ${n} logsBloom`),
  };
}

export async function getHeaders(
  transport: RpcTransport,
  numbers: readonly number[],
): Promise<BlockHeader[]> {
  for (const n of numbers) {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`invalid block number ${n}`);
  }
  return Promise.all(
    numbers.map((n) =>
      transport.request({
        method: "eth_getBlockByNumber",
        params: [numberToHex(n), false],
        parse: (result) => parseHeader(result, n),
      }),
    ),
  );
}
