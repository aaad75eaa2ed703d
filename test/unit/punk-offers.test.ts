import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { toEventSelector } from "viem";
import type { Address, Hex } from "../../src/core/hex.ts";
import { ZERO_ADDRESS } from "../../src/core/hex.ts";
import type { ChainLog, NftTransfer } from "../../src/core/types.ts";
import {
  decodePunkOffer,
  PUNK_NO_LONGER_FOR_SALE,
  PUNK_OFFERED,
  punkOfferChanges,
} from "../../src/indexer/decode/punk-offers.ts";

const PUNKS: Address = "0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb";
const word = (n: bigint): Hex => `0x${n.toString(16).padStart(64, "0")}`;
const addressWord = (a: Address): Hex => `0x${a.slice(2).padStart(64, "0")}`;

function log(topics: Hex[], data: Hex, logIndex = 3): ChainLog {
  return {
    address: PUNKS,
    topics,
    data,
    blockNumber: 100,
    blockHash: word(1n),
    logIndex,
    transactionHash: word(2n),
    transactionIndex: 0,
  };
}

describe("CryptoPunks offer events", () => {
  test("the topics are the selectors of the market's events", () => {
    assert.equal(PUNK_OFFERED, toEventSelector("PunkOffered(uint256,uint256,address)"));
    assert.equal(PUNK_NO_LONGER_FOR_SALE, toEventSelector("PunkNoLongerForSale(uint256)"));
  });

  test("an offer to anyone has its price; one to an address and a withdrawal end the public offer", () => {
    const at = { contract: PUNKS, punkIndex: 7804n, blockNumber: 100, logIndex: 3 };
    const publicOffer = log([PUNK_OFFERED, word(7804n), addressWord(ZERO_ADDRESS)], word(4200n));
    assert.deepEqual(decodePunkOffer(publicOffer), { ...at, minValue: 4200n });
    const toOne = log([PUNK_OFFERED, word(7804n), addressWord(`0x${"ab".repeat(20)}`)], word(1n));
    assert.deepEqual(decodePunkOffer(toOne), { ...at, minValue: null });
    assert.deepEqual(decodePunkOffer(log([PUNK_NO_LONGER_FOR_SALE, word(7804n)], "0x")), {
      ...at,
      minValue: null,
    });
  });

  test("malformed logs and other events are not offers", () => {
    const malformed = [
      log([PUNK_OFFERED, word(1n)], word(1n)),
      log([PUNK_OFFERED, word(1n), addressWord(ZERO_ADDRESS)], "0x"),
      log([PUNK_OFFERED, word(1n), addressWord(ZERO_ADDRESS)], `${word(1n)}00`),
      log([PUNK_NO_LONGER_FOR_SALE, word(1n)], word(1n)),
      log([PUNK_NO_LONGER_FOR_SALE], "0x"),
      log([PUNK_NO_LONGER_FOR_SALE, "0x01"], "0x"),
      log([toEventSelector("PunkBidEntered(uint256,uint256,address)"), word(1n), word(2n)], word(3n)),
    ];
    for (const l of malformed) assert.equal(decodePunkOffer(l), undefined, JSON.stringify(l.topics));
  });

  test("changes are the offer events and every move but a first assignment, in chain order", () => {
    const transfer = (
      tokenId: bigint,
      from: Address,
      blockNumber: number,
      logIndex: number,
    ): NftTransfer => ({
      contract: PUNKS,
      tokenId,
      from,
      to: `0x${"cd".repeat(20)}`,
      amount: 1n,
      blockNumber,
      logIndex,
      seq: 0,
      txHash: word(2n),
      txIndex: 0,
      standard: "punks",
    });
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            block: fc.nat(50),
            index: fc.nat(20),
            price: fc.option(fc.bigInt({ min: 0n, max: 10n ** 20n })),
          }),
          {
            maxLength: 20,
          },
        ),
        fc.array(fc.record({ block: fc.nat(50), index: fc.nat(20), mint: fc.boolean() }), { maxLength: 20 }),
        (offers, moves) => {
          const events = offers.map((o, i) => ({
            contract: PUNKS,
            punkIndex: BigInt(o.index),
            minValue: o.price,
            blockNumber: o.block,
            logIndex: 2 * i,
          }));
          const nft = moves.map((m, i) =>
            transfer(BigInt(m.index), m.mint ? ZERO_ADDRESS : `0x${"ef".repeat(20)}`, m.block, 2 * i + 1),
          );
          const changes = punkOfferChanges(events, nft);
          assert.equal(changes.length, events.length + moves.filter((m) => !m.mint).length);
          for (let i = 1; i < changes.length; i++) {
            const a = changes[i - 1];
            const b = changes[i];
            assert.ok(
              a &&
                b &&
                (a.blockNumber < b.blockNumber ||
                  (a.blockNumber === b.blockNumber && a.logIndex < b.logIndex)),
            );
          }
          for (const c of changes)
            if (c.logIndex % 2 === 1) assert.equal(c.minValue, null, "a move ends the offer");
        },
      ),
      { numRuns: 200 },
    );
  });
});
