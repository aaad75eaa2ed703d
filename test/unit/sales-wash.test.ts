import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import type { Address, Hex } from "../../src/core/hex.ts";
import { saleClass } from "../../src/core/sale-classes.ts";
import type { BlockHeader, ChainLog, ValueFlow } from "../../src/core/types.ts";
import { TRANSFER_TOPIC } from "../../src/indexer/decode/topics.ts";
import { FlowMemory } from "../../src/indexer/flow-memory.ts";
import { valueFlows } from "../../src/indexer/value-flows.ts";
import {
  CYCLE_LOOKBACK,
  cycleLegs,
  FUNDING_LOOKBACK,
  MAX_FANOUT,
  type PastSale,
  washRules,
} from "../../src/sales/wash.ts";

const account = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
const [A, B, C, D, E] = [1, 2, 3, 4, 5].map(account) as [Address, Address, Address, Address, Address];
const HOUR = 3_600;
const DAY = 86_400;
const noContracts = () => undefined;
/** A position for rules that do not read it. */
const AT = { blockNumber: 0, txIndex: 0 };

function pastSale(seller: Address, buyer: Address, time: number, blockNumber: number): PastSale {
  return { seller, buyer, time, blockNumber, logIndex: 0, seq: 0 };
}

/** The rules for a token's next sale after `legs` ([seller, buyer], an hour apart). */
function rulesAfter(legs: [Address, Address][], next: [Address, Address], gap = HOUR) {
  const history: PastSale[] = legs.map(([seller, buyer], i) => pastSale(seller, buyer, i * HOUR, i));
  const time = (legs.length - 1) * HOUR + gap;
  return washRules({ seller: next[0], buyer: next[1], time, history, deployerOf: noContracts, ...AT });
}

describe("wash rules", () => {
  test("a token coming back to a recent seller closes a cycle, however many wallets it went through", () => {
    assert.deepEqual(rulesAfter([[A, B]], [B, A]), ["wash_cycle"]);
    assert.deepEqual(
      rulesAfter(
        [
          [A, B],
          [B, C],
        ],
        [C, A],
      ),
      ["wash_cycle"],
    );
    assert.deepEqual(
      rulesAfter(
        [
          [A, B],
          [B, C],
          [C, D],
          [D, E],
        ],
        [E, A],
      ),
      ["wash_cycle"],
    );
  });

  test("the earlier legs of a cycle are the token's sales from the buyer's latest sale of it on", () => {
    const history = [pastSale(D, A, 0, 1), pastSale(A, B, HOUR, 2), pastSale(B, C, 2 * HOUR, 3)];
    const legs = (buyer: Address) => cycleLegs({ buyer, time: 3 * HOUR, history }).map((s) => s.blockNumber);
    assert.deepEqual(legs(A), [2, 3], "A→B→C→A: the two legs before the one closing it");
    assert.deepEqual(legs(B), [3], "B→C→B");
    assert.deepEqual(legs(E), [], "no cycle");
    const again = [...history, pastSale(C, A, 3 * HOUR, 4), pastSale(A, C, 4 * HOUR, 5)];
    assert.deepEqual(
      cycleLegs({ buyer: A, time: 5 * HOUR, history: again }).map((s) => s.blockNumber),
      [5],
      "the shortest cycle: from the buyer's latest sale",
    );
  });

  test("honest look-alikes: a first trade between friends, a resale onwards, a buyback a year later", () => {
    assert.deepEqual(rulesAfter([], [A, B]), [], "two friends trading once");
    assert.deepEqual(
      rulesAfter(
        [
          [A, B],
          [B, C],
        ],
        [C, D],
      ),
      [],
      "a token sold on to new buyers",
    );
    assert.deepEqual(
      rulesAfter([[A, B]], [B, A], 365 * DAY),
      [],
      "a collector buying a token back a year later",
    );
    assert.deepEqual(rulesAfter([[A, B]], [B, A], CYCLE_LOOKBACK.seconds + 1), []);
    assert.deepEqual(rulesAfter([[A, B]], [B, A], CYCLE_LOOKBACK.seconds), ["wash_cycle"]);
  });

  test("only the last sales of the lookback are read", () => {
    const legs: [Address, Address][] = [[A, B]];
    // B passes it around accounts that never held it before, long enough to push A's sale out.
    for (let i = 0; i < CYCLE_LOOKBACK.sales; i++) legs.push([account(100 + i), account(101 + i)]);
    legs[1] = [B, account(101)];
    assert.deepEqual(rulesAfter(legs, [account(100 + CYCLE_LOOKBACK.sales), A]), []);
  });

  test("a trade with the buyer's own contract, either way, is a self-trade", () => {
    const contract = account(0xc0de);
    const deployerOf = (a: Address) => (a === contract ? A : undefined);
    const rules = (seller: Address, buyer: Address) =>
      washRules({ seller, buyer, time: 0, history: [], deployerOf, ...AT });
    assert.deepEqual(rules(A, contract), ["wash_self"]);
    assert.deepEqual(rules(contract, A), ["wash_self"]);
    assert.deepEqual(rules(B, contract), [], "a contract of someone else's buying");
    // Two smart accounts deployed by one bundler for two users are not one owner.
    const other = account(0xbeef);
    const byBundler = (a: Address) => (a === contract || a === other ? E : undefined);
    assert.deepEqual(
      washRules({ seller: contract, buyer: other, time: 0, history: [], deployerOf: byBundler, ...AT }),
      [],
    );
  });

  test("property: a cycle fires exactly when the buyer sold the token within the lookback", () => {
    const parties = fc.integer({ min: 1, max: 4 }).map(account);
    const leg = fc.record({ seller: parties, buyer: parties, gap: fc.integer({ min: 0, max: 40 * DAY }) });
    fc.assert(
      fc.property(
        fc.array(leg, { maxLength: 12 }),
        parties,
        parties,
        fc.integer({ min: 0, max: 40 * DAY }),
        (legs, seller, buyer, gap) => {
          let time = 0;
          const history = legs.map((l, i) => {
            time += l.gap;
            return pastSale(l.seller, l.buyer, time, i);
          });
          const now = time + gap;
          const recent = history.slice(-CYCLE_LOOKBACK.sales);
          const expected = recent.some((s) => s.seller === buyer && now - s.time <= CYCLE_LOOKBACK.seconds);
          const rules = washRules({ seller, buyer, time: now, history, deployerOf: noContracts, ...AT });
          assert.equal(rules.includes("wash_cycle"), expected);
          // The earlier legs: from the buyer's latest sale of the token on, when that closes a cycle.
          const latest = recent.map((s) => s.seller).lastIndexOf(buyer);
          const legsOf = cycleLegs({ buyer, time: now, history });
          assert.deepEqual(legsOf, expected ? recent.slice(latest) : []);
        },
      ),
    );
  });
});

describe("sale classes", () => {
  test("unpriced before flagged before organic; every wash rule and a rate outlier flag", () => {
    assert.equal(saleClass([]), "organic");
    assert.equal(saleClass(["tx_value"]), "organic");
    assert.equal(saleClass(["wash_cycle"]), "flagged");
    assert.equal(saleClass(["wash_self", "tx_value"]), "flagged");
    assert.equal(saleClass(["rate_outlier"]), "flagged");
    assert.equal(saleClass(["wash"]), "flagged", "the flag of earlier versions");
    assert.equal(saleClass(["wash_cycle", "unpriced"]), "unpriced");
  });
});

describe("wash rules: a common funder shortly before", () => {
  const SALE = { blockNumber: 100, txIndex: 5, time: 100 * 12 };
  let tx = 0;
  /** `value` sent from one account to another, `ago` seconds before the sale, in its own earlier transaction. */
  const sent = (
    from: Address,
    to: Address,
    ago = 60,
    at?: { blockNumber: number; txIndex: number },
  ): ValueFlow => ({
    from,
    to,
    token: null,
    value: 1n,
    blockNumber: at?.blockNumber ?? SALE.blockNumber - Math.ceil(ago / 12) - 1,
    txIndex: at?.txIndex ?? tx++,
    time: SALE.time - ago,
  });
  const memoryOf = (flows: ValueFlow[]) => {
    const memory = new FlowMemory();
    memory.add([...flows].sort((a, b) => a.blockNumber - b.blockNumber || a.txIndex - b.txIndex));
    return memory;
  };
  const rules = (flows: ValueFlow[], seller = A, buyer = B) =>
    washRules({ seller, buyer, history: [], deployerOf: noContracts, ...SALE, funding: memoryOf(flows) });

  test("the seller funding the buyer fires", () => {
    assert.deepEqual(rules([sent(A, B)]), ["wash_funder"]);
    assert.deepEqual(rules([sent(B, A)]), [], "the buyer paying the seller beforehand is not funding");
  });

  test("one account funding both parties fires, in either order", () => {
    assert.deepEqual(rules([sent(C, B, 600), sent(C, A, 300)]), ["wash_funder"]);
    assert.deepEqual(rules([sent(C, A, 600), sent(C, B, 300)]), ["wash_funder"]);
    assert.deepEqual(rules([sent(C, A), sent(D, B)]), [], "two different funders");
  });

  test("a hub funding more than MAX_FANOUT accounts does not tie its customers together", () => {
    const others = Array.from({ length: MAX_FANOUT - 2 }, (_, i) => sent(E, account(0x100 + i)));
    assert.deepEqual(
      rules([sent(E, A), sent(E, B), ...others]),
      ["wash_funder"],
      "exactly MAX_FANOUT recipients",
    );
    const hub = [...others, sent(E, account(0x999))];
    assert.deepEqual(rules([sent(E, A), sent(E, B), ...hub]), []);
    // Recipients sent to more than once count once.
    assert.deepEqual(rules([sent(E, A), sent(E, B), ...others, sent(E, A)]), ["wash_funder"]);
  });

  test("flows after the sale, at its position or outside the lookback do not count", () => {
    const after = { blockNumber: SALE.blockNumber, txIndex: SALE.txIndex + 1 };
    assert.deepEqual(rules([sent(A, B, 0, after)]), []);
    assert.deepEqual(rules([sent(A, B, 0, { blockNumber: SALE.blockNumber, txIndex: SALE.txIndex })]), []);
    assert.deepEqual(rules([sent(A, B, 0, { blockNumber: SALE.blockNumber, txIndex: SALE.txIndex - 1 })]), [
      "wash_funder",
    ]);
    assert.deepEqual(rules([sent(A, B, FUNDING_LOOKBACK.seconds)]), ["wash_funder"], "the lookback's edge");
    assert.deepEqual(rules([sent(A, B, FUNDING_LOOKBACK.seconds + 1)]), []);
    assert.deepEqual(rules([sent(C, B, FUNDING_LOOKBACK.seconds + 1), sent(C, A)]), []);
  });

  test("value moved in a transaction that moved an NFT is marked as a trade's, and is never funding", () => {
    const headers: BlockHeader[] = [
      { number: 7, hash: "0x01", parentHash: "0x00", timestamp: 1_000, logsBloom: "0x" },
    ];
    const pegged = account(0xe7);
    const word = (a: Address) => `0x${a.slice(2).padStart(64, "0")}` as Hex;
    const log = (txHash: Hex, txIndex: number, address: Address, topics: Hex[], value: bigint): ChainLog => ({
      address,
      topics,
      data: `0x${value.toString(16).padStart(64, "0")}`,
      blockNumber: 7,
      blockHash: "0x01",
      logIndex: txIndex,
      transactionHash: txHash,
      transactionIndex: txIndex,
    });
    const nftTx = "0xaa" as Hex;
    const plainTx = "0xbb" as Hex;
    const logs = [
      log(nftTx, 0, pegged, [TRANSFER_TOPIC, word(B), word(A)], 5n),
      log(nftTx, 0, account(0xc011), [TRANSFER_TOPIC, word(A), word(B), word(account(1))], 0n),
      log(plainTx, 1, pegged, [TRANSFER_TOPIC, word(A), word(B)], 7n),
      log(plainTx, 1, account(0xd0), [TRANSFER_TOPIC, word(A), word(B)], 9n),
    ];
    const native = [
      { txHash: nftTx, from: B, to: A, value: 3n, blockNumber: 7, txIndex: 0 },
      { txHash: plainTx, from: C, to: D, value: 4n, blockNumber: 7, txIndex: 1 },
    ];
    const flows = valueFlows({ headers, logs, native }, 7, 7, new Set([pegged]));
    assert.deepEqual(flows, [
      { from: B, to: A, token: null, value: 3n, blockNumber: 7, txIndex: 0, time: 1_000, inTrade: true },
      { from: B, to: A, token: pegged, value: 5n, blockNumber: 7, txIndex: 0, time: 1_000, inTrade: true },
      { from: C, to: D, token: null, value: 4n, blockNumber: 7, txIndex: 1, time: 1_000 },
      { from: A, to: B, token: pegged, value: 7n, blockNumber: 7, txIndex: 1, time: 1_000 },
    ]);
    const memory = new FlowMemory();
    memory.add(flows);
    assert.deepEqual(memory.into(A), [], "the trade's flows are not held as funding");
    assert.equal(memory.size, 2);
  });

  test("property: the rule follows its definition, and batching and pruning the memory change nothing", () => {
    const parties = fc.integer({ min: 1, max: 14 }).map(account);
    const flow = fc.record({
      from: parties,
      to: parties,
      gap: fc.integer({ min: 0, max: 900 }),
      txs: fc.nat(2),
    });
    fc.assert(
      fc.property(
        fc.array(flow, { maxLength: 40 }),
        fc.array(fc.record({ seller: parties, buyer: parties, at: fc.nat(40) }), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.array(fc.nat(40), { maxLength: 5 }),
        (raw, sales, cuts) => {
          // Flows in chain order: a block per step, 12 s apart.
          let block = 1;
          const flows: ValueFlow[] = raw.map((f, i) => {
            block += Math.ceil(f.gap / 12);
            return {
              from: f.from,
              to: f.to,
              token: null,
              value: 1n,
              blockNumber: block,
              txIndex: f.txs + i * 3,
              time: block * 12,
            };
          });
          const positioned = sales.map((s) => {
            const near = flows[Math.min(s.at, flows.length - 1)];
            const blockNumber = near?.blockNumber ?? 1;
            return { ...s, blockNumber, txIndex: (near?.txIndex ?? 0) + 1, time: blockNumber * 12 };
          });
          positioned.sort((a, b) => a.blockNumber - b.blockNumber || a.txIndex - b.txIndex);
          const expected = positioned.map((s) => {
            const before = flows.filter(
              (f) =>
                f.from !== f.to &&
                s.time - f.time <= FUNDING_LOOKBACK.seconds &&
                (f.blockNumber < s.blockNumber || (f.blockNumber === s.blockNumber && f.txIndex < s.txIndex)),
            );
            if (s.seller === s.buyer) return false;
            if (before.some((f) => f.from === s.seller && f.to === s.buyer)) return true;
            return before.some(
              (f) =>
                f.to === s.buyer &&
                f.from !== s.seller &&
                f.from !== s.buyer &&
                before.some((g) => g.from === f.from && g.to === s.seller) &&
                new Set(before.filter((g) => g.from === f.from).map((g) => g.to)).size <= MAX_FANOUT,
            );
          });
          // The same sales flagged with the flows taken in by batches ending at `cuts`, pruned after each.
          const ends = [...new Set([...cuts, 1_000])].sort((a, b) => a - b);
          const memory = new FlowMemory();
          let taken = 0;
          let next = 0;
          const got: boolean[] = [];
          for (const end of ends) {
            const batch = flows.filter((f, i) => i >= taken && f.blockNumber <= end);
            taken += batch.length;
            memory.add(batch);
            for (; next < positioned.length && (positioned[next]?.blockNumber ?? 0) <= end; next++) {
              const s = positioned[next] as (typeof positioned)[number];
              const fired = washRules({ ...s, history: [], deployerOf: noContracts, funding: memory });
              got.push(fired.includes("wash_funder"));
            }
            const last = Math.min(end, block);
            memory.prune(last * 12);
          }
          assert.deepEqual(got, expected);
        },
      ),
    );
  });
});

describe("the memory of value flows, at its limit", () => {
  test("the oldest flows go first, from every index, and are counted", () => {
    const memory = new FlowMemory(3);
    const sent = (to: Address, time: number): ValueFlow => ({
      from: A,
      to,
      token: null,
      value: 1n,
      blockNumber: time,
      txIndex: 0,
      time,
    });
    memory.add([sent(B, 1), sent(C, 2), sent(B, 3), sent(D, 4), sent(E, 5)]);
    memory.prune(5);
    assert.equal(memory.size, 3);
    assert.equal(memory.droppedEarly, 2);
    assert.deepEqual(
      memory.into(B).map((f) => f.time),
      [3],
    );
    assert.deepEqual(memory.into(C), []);
    assert.deepEqual(
      memory.outOf(A).map((f) => f.time),
      [3, 4, 5],
    );
  });
});
