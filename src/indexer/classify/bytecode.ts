import type { Hex } from "../../core/hex.ts";

/*
 * Static reading of deployed EVM byte-code, for classification: which 4-byte function selectors
 * it dispatches on and which 32-byte constants (event topics) it pushes. It walks the code
 * instruction by instruction, so bytes inside PUSH immediates are never mistaken for opcodes,
 * and stops where the executable part ends:
 * - at the compiler's metadata (Solidity and Vyper append a CBOR map whose length is in the last
 *   two bytes); its hash bytes would otherwise decode as random pushes;
 * - at an embedded contract: a factory carries its children's creation code as data after its
 *   own code, and their selectors and topics are not the factory's. It is recognised as a STOP or
 *   INVALID followed by the solc prologue `PUSH1 0x80|0x60 PUSH1 0x40 MSTORE`, which a compiler
 *   never emits as reachable code (an instruction after a terminator needs a JUMPDEST).
 */

const STOP = 0x00;
const EQ = 0x14;
const JUMPI = 0x57;
const PUSH1 = 0x60;
const PUSH4 = 0x63;
const PUSH32 = 0x7f;
const DUP1 = 0x80;
const DUP16 = 0x8f;
const INVALID = 0xfe;

/** The code as bytes; non-hex input yields as many bytes as parse. */
export function codeBytes(code: string): Uint8Array {
  const hex = code.startsWith("0x") || code.startsWith("0X") ? code.slice(2) : code;
  return Buffer.from(hex.length % 2 === 0 ? hex : hex.slice(0, -1), "hex");
}

const METADATA_KEYS = new Set(["ipfs", "bzzr0", "bzzr1", "experimental", "solc", "vyper"]);

/** Where the compiler's trailing CBOR metadata starts, or the code's length when there is none. */
export function metadataStart(bytes: Uint8Array): number {
  const n = bytes.length;
  if (n < 4) return n;
  const length = ((bytes[n - 2] ?? 0) << 8) | (bytes[n - 1] ?? 0);
  const start = n - 2 - length;
  if (length < 3 || start < 0) return n;
  // A map of 1 to 5 entries whose first key is a short text string the compilers use.
  const map = bytes[start] ?? 0;
  const key = bytes[start + 1] ?? 0;
  if (map < 0xa1 || map > 0xa5 || key < 0x61 || key > 0x77) return n;
  const keyLength = key - 0x60;
  const name = Buffer.from(bytes.subarray(start + 2, start + 2 + keyLength)).toString("latin1");
  return METADATA_KEYS.has(name) ? start : n;
}

function startsEmbeddedCode(bytes: Uint8Array, at: number): boolean {
  return (
    bytes[at] === PUSH1 &&
    (bytes[at + 1] === 0x80 || bytes[at + 1] === 0x60) &&
    bytes[at + 2] === PUSH1 &&
    bytes[at + 3] === 0x40 &&
    bytes[at + 4] === 0x52
  );
}

/** Width of the immediate of opcode `op`: 1..32 for PUSH1..PUSH32, 0 otherwise. */
function immediateWidth(op: number): number {
  return op >= PUSH1 && op <= PUSH32 ? op - PUSH1 + 1 : 0;
}

/**
 * Calls `visit(pc, op, width)` for each instruction of the executable part of the code, `width`
 * being its immediate's length (truncated pushes at the very end are not visited).
 */
function walk(bytes: Uint8Array, visit: (pc: number, op: number, width: number) => void): void {
  const end = metadataStart(bytes);
  let pc = 0;
  while (pc < end) {
    const op = bytes[pc] ?? STOP;
    const width = immediateWidth(op);
    if (pc + width >= end) return;
    visit(pc, op, width);
    if ((op === STOP || op === INVALID) && startsEmbeddedCode(bytes, pc + 1)) return;
    pc += 1 + width;
  }
}

function readImmediate(bytes: Uint8Array, pc: number, width: number, padTo: number): string {
  const hex = Buffer.from(bytes.subarray(pc + 1, pc + 1 + width)).toString("hex");
  return `0x${hex.padStart(padTo * 2, "0")}`;
}

/**
 * Whether the push at `pc` is a dispatcher comparison: `PUSHn selector [DUPk] EQ PUSHm dest JUMPI`,
 * the form every solc version gives `if (msg.sig == selector) goto function`.
 */
function isDispatcherCompare(bytes: Uint8Array, pc: number, width: number): boolean {
  let at = pc + 1 + width;
  const next = bytes[at] ?? STOP;
  if (next >= DUP1 && next <= DUP16) at++;
  if (bytes[at] !== EQ) return false;
  const destWidth = immediateWidth(bytes[at + 1] ?? STOP);
  return destWidth >= 1 && destWidth <= 4 && bytes[at + 2 + destWidth] === JUMPI;
}

/**
 * Selectors the contract's dispatcher compares the call's selector with: its external functions.
 * Selectors of functions it merely calls on other contracts (pushed to build calldata) are not
 * among them, which keeps a marketplace that calls `ownerOf` from looking like an NFT. A selector
 * with leading zero bytes is pushed with a shorter PUSH, and comes out left-padded.
 */
export function dispatcherSelectors(code: Hex): Set<string> {
  const bytes = codeBytes(code);
  const selectors = new Set<string>();
  walk(bytes, (pc, op, width) => {
    if (op <= PUSH4 && width > 0 && isDispatcherCompare(bytes, pc, width)) {
      selectors.add(readImmediate(bytes, pc, width, 4));
    }
  });
  return selectors;
}

/**
 * Every 4-byte constant the code pushes (PUSH4 immediates), plus the dispatcher's selectors pushed
 * with a shorter PUSH: a superset of the external functions that also holds called selectors and
 * masks such as 0xffffffff. For code whose dispatcher has an unfamiliar form.
 */
export function functionSelectors(code: Hex): Set<string> {
  const bytes = codeBytes(code);
  const selectors = new Set<string>();
  walk(bytes, (pc, op, width) => {
    if (op === PUSH4 || (op < PUSH4 && width > 0 && isDispatcherCompare(bytes, pc, width))) {
      selectors.add(readImmediate(bytes, pc, width, 4));
    }
  });
  return selectors;
}

/** Every 32-byte constant the code pushes: the topic0 of each event it can emit is among them. */
export function pushedWords(code: Hex): Set<string> {
  const bytes = codeBytes(code);
  const words = new Set<string>();
  walk(bytes, (pc, op, width) => {
    if (op === PUSH32) words.add(readImmediate(bytes, pc, width, 32));
  });
  return words;
}

/** Whether the code pushes `topic0` as a 32-byte constant, as Solidity does to emit that event. */
export function hasEventTopic(code: Hex, topic0: Hex): boolean {
  return pushedWords(code).has(topic0.toLowerCase());
}
