import type { Address, Hex } from "../core/hex.ts";
import type { BlockTraces, ContractCreation, NativeTransfer, TransactionCall } from "../core/types.ts";
import { MalformedAnswerError, NotAvailableYetError } from "./errors.ts";
import { address, array, hash, object, quantity, type RawObject, uint256 } from "./parse.ts";

/**
 * Contract creations from the two trace forms nodes offer. A creation counts only when its own frame
 * and every frame above it succeeded: a failed frame reverts everything done beneath it, so a CREATE
 * under a reverted call left no contract behind even though its own frame reports success.
 */

function failed(frame: RawObject): boolean {
  return frame.error !== undefined && frame.error !== null;
}

/**
 * Parity/OpenEthereum `trace_block` (also erigon, nethermind, reth, anvil): a flat list of frames in
 * depth-first order, each placed in its transaction by `traceAddress`. Block-level entries (rewards)
 * have no transaction and are skipped.
 */
export function parseParityBlockTraces(result: unknown, blockNumber: number): ContractCreation[] {
  return parseParityBlockTraceData(result, blockNumber).creations;
}

/**
 * Creations and native movements of a `trace_block` answer (see parseParityBlockTraces), in one
 * pass: frames come depth-first, so every frame's ancestors, and whether one of them failed, are
 * known when it is reached.
 */
export function parseParityBlockTraceData(result: unknown, blockNumber: number): BlockTraces {
  if (result === null) throw new NotAvailableYetError(`traces of block ${blockNumber} are not available yet`);
  const traces = array(result, `trace_block ${blockNumber} result`);
  // Failed frames as `tx:path`, and the transactions that have one: most have none, and for those
  // no frame's ancestry needs looking up.
  const failedPaths = new Set<string>();
  const failedTxs = new Set<Hex>();
  const creations: ContractCreation[] = [];
  const native: NativeTransfer[] = [];
  const calls: TransactionCall[] = [];
  let blockHash: Hex | undefined;
  let rawBlockHash: unknown;
  // A transaction's frames are consecutive: its hash is read once.
  let rawTx: unknown;
  let tx: Hex | undefined;
  let txFrom: Address | undefined;
  // The transaction's index in its block: `transactionPosition`, or, from a node that leaves it
  // out, the count of transactions before it (every transaction has a top-level frame).
  let txIndex = -1;

  for (let i = 0; i < traces.length; i++) {
    const trace = object(traces[i], `trace ${i} of block ${blockNumber}`);
    if (trace.transactionHash === null || trace.transactionHash === undefined) continue;
    if (trace.transactionHash !== rawTx) {
      rawTx = trace.transactionHash;
      tx = hash(trace.transactionHash, `trace ${i} transactionHash`);
      txFrom = undefined;
      const position = trace.transactionPosition;
      txIndex =
        typeof position === "number" && Number.isSafeInteger(position) && position >= 0
          ? position
          : txIndex + 1;
    }
    const txHash = tx as Hex;
    const traceBlock = quantity(trace.blockNumber, `trace ${i} blockNumber`);
    if (traceBlock !== blockNumber) {
      throw new MalformedAnswerError(
        `asked for traces of block ${blockNumber}, got a trace of block ${traceBlock}`,
      );
    }
    if (trace.blockHash !== rawBlockHash) {
      const traceHash = hash(trace.blockHash, `trace ${i} blockHash`);
      if (blockHash !== undefined && traceHash !== blockHash) {
        throw new MalformedAnswerError(
          `traces of block ${blockNumber} are of two blocks, ${blockHash} and ${traceHash}`,
        );
      }
      blockHash = traceHash;
      rawBlockHash = trace.blockHash;
    }
    const path = array(trace.traceAddress, `trace ${i} traceAddress`);
    for (const step of path) {
      if (typeof step !== "number" || !Number.isSafeInteger(step) || step < 0) {
        throw new MalformedAnswerError(`malformed answer: trace ${i} traceAddress holds ${String(step)}`);
      }
    }
    if (path.length === 0) {
      const action = object(trace.action, `trace ${i} action`);
      txFrom = address(action.from, `trace ${i} action.from`);
      calls.push({
        txHash,
        from: txFrom,
        to: trace.type === "create" ? null : address(action.to, `trace ${i} action.to`),
        value: uint256(action.value, `trace ${i} action.value`),
      });
    }
    if (failed(trace)) {
      failedTxs.add(txHash);
      failedPaths.add(`${txHash}:${path.join(",")}`);
    }
    if (trace.type !== "create" && trace.type !== "call" && trace.type !== "suicide") continue;
    if (failedTxs.has(txHash) && reverted(failedPaths, txHash, path as number[])) continue;
    const moved = parityMovement(trace, txHash, blockNumber, txIndex);
    if (moved) native.push(moved);
    if (trace.type !== "create") continue;
    if (!txFrom) {
      throw new MalformedAnswerError(`block ${blockNumber} transaction ${txHash} has no top-level trace`);
    }
    creations.push({
      address: address(object(trace.result, "create trace result").address, "create trace result.address"),
      creator: address(object(trace.action, "create trace action").from, "create trace action.from"),
      txFrom,
      txHash,
      blockNumber,
      // Every frame kept came with a transaction, so the hash was read.
      blockHash: blockHash as Hex,
    });
  }
  const tracedBlocks = blockHash === undefined ? [] : [{ number: blockNumber, hash: blockHash }];
  return { creations, native, calls, tracedBlocks };
}

/** Whether the frame at `path`, or one above it, failed. */
function reverted(failedPaths: ReadonlySet<string>, tx: Hex, path: readonly number[]): boolean {
  let prefix = `${tx}:`;
  if (failedPaths.has(prefix)) return true;
  for (let depth = 0; depth < path.length; depth++) {
    prefix += depth === 0 ? `${path[depth]}` : `,${path[depth]}`;
    if (failedPaths.has(prefix)) return true;
  }
  return false;
}

/**
 * The native coin a parity frame moved, if any. Delegate and static calls move none (a delegate
 * call reports the value of the call it runs inside), nor does a callcode (it pays the caller).
 */
function parityMovement(
  trace: RawObject,
  tx: Hex,
  blockNumber: number,
  txIndex: number,
): NativeTransfer | undefined {
  const action = object(trace.action, "trace action");
  if (trace.type === "suicide") {
    const value = uint256(action.balance, "suicide trace balance");
    if (value === 0n) return undefined;
    return {
      txHash: tx,
      from: address(action.address, "suicide trace address"),
      to: address(action.refundAddress, "suicide trace refundAddress"),
      value,
      blockNumber,
      txIndex,
    };
  }
  if (trace.type === "call" && action.callType !== "call") return undefined;
  const value = uint256(action.value, `${String(trace.type)} trace value`);
  if (value === 0n) return undefined;
  const to =
    trace.type === "create"
      ? address(object(trace.result, "create trace result").address, "create trace result.address")
      : address(action.to, "call trace to");
  return { txHash: tx, from: address(action.from, "trace action.from"), to, value, blockNumber, txIndex };
}

/**
 * geth `debug_traceBlockByHash` with callTracer: one call tree per transaction, in block order, as
 * `{ txHash?, result }` (geth before 1.11 sends no txHash). `txHashes`, the block's transaction list,
 * names the transactions and is checked against the txHash each entry has.
 */
export function parseGethBlockTraces(
  result: unknown,
  blockNumber: number,
  blockHash: Hex,
  txHashes?: readonly Hex[],
): ContractCreation[] {
  return parseGethBlockTraceData(result, blockNumber, blockHash, txHashes).creations;
}

/** Creations and native movements of a `debug_traceBlockByHash` answer (see parseGethBlockTraces). */
export function parseGethBlockTraceData(
  result: unknown,
  blockNumber: number,
  blockHash: Hex,
  txHashes?: readonly Hex[],
): BlockTraces {
  if (result === null) throw new NotAvailableYetError(`traces of block ${blockNumber} are not available yet`);
  const entries = array(result, `debug_traceBlockByHash ${blockNumber} result`);
  if (txHashes && txHashes.length !== entries.length) {
    throw new MalformedAnswerError(
      `block ${blockNumber} has ${txHashes.length} transactions but the node traced ${entries.length}`,
    );
  }
  const creations: ContractCreation[] = [];
  const native: NativeTransfer[] = [];
  const calls: TransactionCall[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = object(entries[i], `trace ${i} of block ${blockNumber}`);
    if (entry.result === undefined && failed(entry)) {
      throw new MalformedAnswerError(
        `the node could not trace transaction ${i} of block ${blockNumber}: ${String(entry.error)}`,
      );
    }
    const top = entry.result === undefined ? entry : object(entry.result, `trace ${i} result`);
    const listed = txHashes?.[i];
    const txHash =
      entry.txHash === undefined || entry.txHash === null ? listed : hash(entry.txHash, `trace ${i} txHash`);
    if (txHash === undefined) {
      throw new MalformedAnswerError(`trace ${i} of block ${blockNumber} names no transaction`);
    }
    if (listed !== undefined && listed.toLowerCase() !== txHash) {
      throw new MalformedAnswerError(
        `trace ${i} of block ${blockNumber} is for ${txHash}, the block lists ${listed}`,
      );
    }
    const txFrom = address(top.from, `trace ${i} from`);
    const topType = typeof top.type === "string" ? top.type.toUpperCase() : "";
    calls.push({
      txHash: txHash.toLowerCase() as Hex,
      from: txFrom,
      to: topType === "CREATE" || topType === "CREATE2" ? null : address(top.to, `trace ${i} to`),
      value: uint256(top.value, `trace ${i} value`),
    });

    // Depth-first, children in order, so creations come out in execution order like the parity form.
    const stack: RawObject[] = [top];
    while (stack.length > 0) {
      const frame = stack.pop() as RawObject;
      if (failed(frame)) continue;
      const type = typeof frame.type === "string" ? frame.type.toUpperCase() : "";
      // Delegate, static and callcode frames move no coin between accounts.
      if (type === "CALL" || type === "CREATE" || type === "CREATE2" || type === "SELFDESTRUCT") {
        const value = uint256(frame.value, `trace ${i} ${type} value`);
        if (value > 0n) {
          native.push({
            txHash: txHash.toLowerCase() as Hex,
            from: address(frame.from, `trace ${i} ${type} from`),
            to: address(frame.to, `trace ${i} ${type} to`),
            value,
            blockNumber,
            txIndex: i,
          });
        }
      }
      if (type === "CREATE" || type === "CREATE2") {
        creations.push({
          address: address(frame.to, `trace ${i} ${type} to`),
          creator: address(frame.from, `trace ${i} ${type} from`),
          txFrom,
          txHash: txHash.toLowerCase() as Hex,
          blockNumber,
          blockHash,
        });
      }
      if (frame.calls === undefined || frame.calls === null) continue;
      const children = array(frame.calls, `trace ${i} calls`);
      for (let c = children.length - 1; c >= 0; c--) stack.push(object(children[c], `trace ${i} call`));
    }
  }
  return { creations, native, calls, tracedBlocks: [{ number: blockNumber, hash: blockHash }] };
}
