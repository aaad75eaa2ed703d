import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { MalformedAnswerError } from "../../src/chain/errors.ts";
import {
  parseGethBlockTraceData,
  parseGethBlockTraces,
  parseParityBlockTraceData,
  parseParityBlockTraces,
} from "../../src/chain/traces.ts";
import type { Hex } from "../../src/core/hex.ts";

/**
 * Four real mainnet blocks, each recorded both as parity trace_block and as geth callTracer output
 * (test/fixtures/realdata/ethereum-etl, MIT, see SOURCE.md there). The geth recordings come from a geth
 * old enough to send no txHash, so hashes come from the block's transaction list, which the parity
 * recording carries (one hash per transactionPosition).
 */
const DIR = join(import.meta.dirname, "../fixtures/realdata/ethereum-etl/traces");
const BLOCKS = [0xf4240, 0xf44f2, 0xf45bf, 0xf7105];

interface Recorded {
  result: unknown[];
}

function load(name: string): Recorded {
  return JSON.parse(readFileSync(join(DIR, name), "utf8")) as Recorded;
}

function parity(block: number): Recorded {
  return load(`parity_trace_block_0x${block.toString(16)}.json`);
}

function geth(block: number): Recorded {
  return load(`geth_debug_traceBlockByNumber_0x${block.toString(16)}_tracer_calltracer.json`);
}

/** The block's transaction hashes in order, as eth_getBlockByNumber(n, false) would list them. */
function transactionHashes(block: number): Hex[] {
  const hashes: Hex[] = [];
  for (const trace of parity(block).result as {
    transactionHash: Hex | null;
    transactionPosition: number | null;
  }[]) {
    if (trace.transactionHash === null || trace.transactionPosition === null) continue;
    hashes[trace.transactionPosition] = trace.transactionHash;
  }
  return hashes;
}

/** The block's hash, which every parity trace carries (the geth form has none: it is traced by hash). */
function blockHashOf(block: number): Hex {
  return (parity(block).result[0] as { blockHash: Hex }).blockHash;
}

const CREATION_IN_1000690 = {
  address: "0xa7e3cf952ea8d9438a26ee346c295f1ada328ae1",
  creator: "0xacdee28d8ca76187883831a37f551a5904cdf191",
  txFrom: "0xacdee28d8ca76187883831a37f551a5904cdf191",
  txHash: "0xe4de004685c7b5fe48854cfb54cd59686f3f7cbf95e68c3984dfd672fe677871",
  blockNumber: 1000690,
  blockHash: "0x140d89c4fcaa42e691e68d1003c2d3adb294335e93c6c1aa734170ab028016b3",
};

describe("trace parsers on recorded mainnet blocks", () => {
  for (const block of BLOCKS) {
    test(`block ${block}: parity and geth forms give the same creations`, () => {
      const fromParity = parseParityBlockTraces(parity(block).result, block);
      const fromGeth = parseGethBlockTraces(
        geth(block).result,
        block,
        blockHashOf(block),
        transactionHashes(block),
      );
      assert.deepEqual(fromGeth, fromParity);
      assert.deepEqual(fromParity, block === 1000690 ? [CREATION_IN_1000690] : []);
    });
  }

  test("native movements carry their block and their transaction's index, alike in both forms", () => {
    let moved = 0;
    for (const block of BLOCKS) {
      const hashes = transactionHashes(block);
      const fromParity = parseParityBlockTraceData(parity(block).result, block).native;
      const fromGeth = parseGethBlockTraceData(geth(block).result, block, blockHashOf(block), hashes).native;
      const key = (n: (typeof fromParity)[number]) => `${n.txHash}:${n.from}:${n.to}:${n.value}:${n.txIndex}`;
      // The recorded geth is old enough that its call tracer leaves self-destructs out.
      const inParity = new Set(fromParity.map(key));
      for (const n of fromGeth) assert.ok(inParity.has(key(n)), `block ${block}: ${key(n)}`);
      assert.ok(fromGeth.length >= fromParity.length - 1, `block ${block}`);
      for (const n of [...fromParity, ...fromGeth]) {
        assert.equal(n.blockNumber, block);
        assert.equal(hashes[n.txIndex], n.txHash, "the index is the transaction's place in its block");
      }
      // A node that leaves transactionPosition out: the index is counted from the frames.
      const unplaced = (parity(block).result as Record<string, unknown>[]).map(
        ({ transactionPosition: _, ...rest }) => rest,
      );
      assert.deepEqual(parseParityBlockTraceData(unplaced, block).native, fromParity);
      moved += fromParity.length;
    }
    assert.ok(moved > 0, "the blocks move native coin");
  });

  test("the recorded geth traces carry no txHash, so the block's hashes are required", () => {
    const recorded = geth(1000690).result;
    assert.throws(() => parseGethBlockTraces(recorded, 1000690, blockHashOf(1000690)), MalformedAnswerError);
    assert.throws(
      () =>
        parseGethBlockTraces(recorded, 1000690, blockHashOf(1000690), transactionHashes(1000690).slice(1)),
      /has 1 transactions but the node traced 2/,
    );
  });

  test("newer geth form: txHash in each entry, and it must match the block's list", () => {
    const hashes = transactionHashes(1000690);
    const withHashes = geth(1000690).result.map((entry, i) => ({ txHash: hashes[i], ...(entry as object) }));
    assert.deepEqual(parseGethBlockTraces(withHashes, 1000690, blockHashOf(1000690)), [CREATION_IN_1000690]);
    assert.throws(
      () => parseGethBlockTraces(withHashes, 1000690, blockHashOf(1000690), [...hashes].reverse()),
      /is for/,
    );
  });

  test("a creation whose frame failed is not counted, in either form", () => {
    const parityTraces = structuredClone(parity(1000690).result) as { type: string; error?: string }[];
    const create = parityTraces.find((t) => t.type === "create");
    assert.ok(create);
    create.error = "Out of gas";
    assert.deepEqual(parseParityBlockTraces(parityTraces, 1000690), []);

    const gethTraces = structuredClone(geth(1000690).result) as {
      result: { type: string; error?: string };
    }[];
    const frame = gethTraces.find((t) => t.result.type === "CREATE");
    assert.ok(frame);
    frame.result.error = "out of gas";
    assert.deepEqual(
      parseGethBlockTraces(gethTraces, 1000690, blockHashOf(1000690), transactionHashes(1000690)),
      [],
    );
  });

  test("a creation under a failed frame, however deep, is not counted though its own frame succeeded", () => {
    // Move the recorded top-level CREATE two levels down, under a successful CALL and a failing one,
    // both copied from the block's other (plain transfer) transaction.
    const parityTraces = structuredClone(parity(1000690).result) as Record<string, unknown>[];
    const createAt = parityTraces.findIndex((t) => t.type === "create");
    const create = parityTraces[createAt] as Record<string, unknown>;
    const call = (traceAddress: number[]): Record<string, unknown> => ({
      ...structuredClone(parityTraces[0] as Record<string, unknown>),
      subtraces: 1,
      transactionHash: create.transactionHash,
      transactionPosition: create.transactionPosition,
      traceAddress,
    });
    const outer = call([]);
    const inner = { ...call([0]), error: "Reverted" };
    create.traceAddress = [0, 0];
    parityTraces.splice(createAt, 0, outer, inner);
    assert.deepEqual(parseParityBlockTraces(parityTraces, 1000690), []);
    // The same tree without the failure: the nested creation counts, with the outer call's sender as txFrom.
    delete (inner as Record<string, unknown>).error;
    const nested = parseParityBlockTraces(parityTraces, 1000690);
    assert.deepEqual(nested, [
      { ...CREATION_IN_1000690, txFrom: "0xaf21e07e5a929d16026a7b4d88f3906a8d2e4942" },
    ]);

    const gethTraces = structuredClone(geth(1000690).result) as { result: Record<string, unknown> }[];
    const gethCreate = gethTraces[1]?.result as Record<string, unknown>;
    const gethCall = gethTraces[0]?.result as Record<string, unknown>;
    const gethInner: Record<string, unknown> = {
      ...structuredClone(gethCall),
      error: "execution reverted",
      calls: [gethCreate],
    };
    gethTraces[1] = { result: { ...structuredClone(gethCall), calls: [gethInner] } };
    assert.deepEqual(
      parseGethBlockTraces(gethTraces, 1000690, blockHashOf(1000690), transactionHashes(1000690)),
      [],
    );
    delete gethInner.error;
    assert.deepEqual(
      parseGethBlockTraces(gethTraces, 1000690, blockHashOf(1000690), transactionHashes(1000690)),
      nested,
    );
  });

  test("a transaction the node could not trace is a fault, not an empty result", () => {
    const traces = [{ error: "execution timeout" }, ...geth(1000690).result.slice(1)];
    assert.throws(
      () => parseGethBlockTraces(traces, 1000690, blockHashOf(1000690), transactionHashes(1000690)),
      /could not trace transaction 0 of block 1000690: execution timeout/,
    );
  });

  test("traces of another block, or none at all, are faults", () => {
    assert.throws(
      () => parseParityBlockTraces(parity(1000690).result, 1000691),
      /got a trace of block 1000690/,
    );
    assert.throws(() => parseParityBlockTraces(null, 1000690), MalformedAnswerError);
    assert.throws(() => parseGethBlockTraces(null, 1000690, blockHashOf(1000690)), MalformedAnswerError);
  });
});
