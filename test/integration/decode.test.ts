import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import {
  type Abi,
  type AbiEvent,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  encodeAbiParameters,
  encodeEventTopics,
  getAddress,
  http,
  keccak256,
  type Log,
  type PublicClient,
  parseAbiItem,
  parseEther,
  stringToHex,
  toEventSelector,
  type WalletClient,
} from "viem";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { ChainLog, ContractType, NftTransfer } from "../../src/core/types.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { decodeLogs } from "../../src/indexer/decode/decode-logs.ts";
import {
  CONSECUTIVE_BUDGET_PER_BLOCK,
  CONSECUTIVE_BUDGET_PER_CONTRACT_BLOCK,
} from "../../src/indexer/decode/erc2309.ts";
import { emittedShapes, eventShape } from "../../src/indexer/decode/shapes.ts";
import {
  CONSECUTIVE_TRANSFER_TOPIC,
  PUNK_ASSIGN_TOPIC,
  PUNK_BOUGHT_TOPIC,
  PUNK_TRANSFER_TOPIC,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
  TRANSFER_TOPICS,
} from "../../src/indexer/decode/topics.ts";

// The events as their contracts declare them; `Transfer` in each of its three layouts.
const ERC721_TRANSFER = parseAbiItem(
  "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
);
const ERC20_TRANSFER = parseAbiItem(
  "event Transfer(address indexed from, address indexed to, uint256 value)",
);
const UNINDEXED_TRANSFER = parseAbiItem("event Transfer(address from, address to, uint256 tokenId)");
const TRANSFER_SINGLE = parseAbiItem(
  "event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)",
);
const TRANSFER_BATCH = parseAbiItem(
  "event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)",
);
const CONSECUTIVE = parseAbiItem(
  "event ConsecutiveTransfer(uint256 indexed fromTokenId, uint256 toTokenId, address indexed fromAddress, address indexed toAddress)",
);
const ASSIGN = parseAbiItem("event Assign(address indexed to, uint256 punkIndex)");
const PUNK_TRANSFER = parseAbiItem(
  "event PunkTransfer(address indexed from, address indexed to, uint256 punkIndex)",
);
const PUNK_BOUGHT = parseAbiItem(
  "event PunkBought(uint256 indexed punkIndex, uint256 value, address indexed fromAddress, address indexed toAddress)",
);
const PUNK_NO_LONGER_FOR_SALE = parseAbiItem("event PunkNoLongerForSale(uint256 indexed punkIndex)");
const APPROVAL = parseAbiItem(
  "event Approval(address indexed owner, address indexed spender, uint256 value)",
);

const ZERO = "0x0000000000000000000000000000000000000000" as Address;
const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
const NFT = addr(0x721);
const TOKEN = addr(0x20);
const PUNKS = addr(0x9999);
const ALICE = "0xa11ce00000000000000000000000000000000a11" as Address;
const BOB = "0xb0b0000000000000000000000000000000000b0b" as Address;
const CAROL = "0xca401000000000000000000000000000000ca401" as Address;
const OPERATOR = addr(0x0e);

const txHash = (n: number) => keccak256(stringToHex(`tx ${n}`));

/** Topics and data of `event` emitted with `args`, as viem encodes them. */
function encodeEvent(event: AbiEvent, args: Record<string, unknown>): { topics: Hex[]; data: Hex } {
  const topics = encodeEventTopics({ abi: [event], eventName: event.name, args } as never) as Hex[];
  const dataInputs = event.inputs.filter((input) => !input.indexed);
  const data =
    dataInputs.length === 0
      ? "0x"
      : encodeAbiParameters(
          dataInputs,
          dataInputs.map((i) => args[i.name ?? ""]),
        );
  return { topics, data };
}

interface LogPlace {
  address: Address;
  tx?: number;
  logIndex?: number;
  block?: number;
}

let nextLogIndex = 0;

function chainLog(place: LogPlace, topics: readonly Hex[], data: Hex): ChainLog {
  const block = place.block ?? 100;
  const tx = place.tx ?? 1;
  return {
    address: place.address,
    topics,
    data,
    blockNumber: block,
    blockHash: keccak256(stringToHex(`block ${block}`)),
    logIndex: place.logIndex ?? nextLogIndex++,
    transactionHash: txHash(tx),
    transactionIndex: tx,
  };
}

function eventLog(place: LogPlace, event: AbiEvent, args: Record<string, unknown>): ChainLog {
  const { topics, data } = encodeEvent(event, args);
  return chainLog(place, topics, data);
}

function typesMap(entries: Record<Address, readonly ContractType[]>) {
  const map = new Map<Address, ReadonlySet<ContractType>>();
  for (const [address, types] of Object.entries(entries)) map.set(address as Address, new Set(types));
  return (address: Address) => map.get(address);
}

const noTypes = () => undefined;

/** What an NftTransfer of `log` must hold, its values given by the test. */
function expectedNft(
  log: ChainLog,
  fields: Pick<NftTransfer, "tokenId" | "from" | "to" | "amount" | "standard"> & { seq?: number },
): NftTransfer {
  return {
    contract: log.address,
    tokenId: fields.tokenId,
    from: fields.from,
    to: fields.to,
    amount: fields.amount,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
    seq: fields.seq ?? 0,
    txHash: log.transactionHash,
    txIndex: log.transactionIndex,
    standard: fields.standard,
  };
}

describe("topic constants", () => {
  test("are the keccak-256 selectors of their event signatures", () => {
    assert.equal(TRANSFER_TOPIC, toEventSelector("Transfer(address,address,uint256)"));
    assert.equal(
      TRANSFER_SINGLE_TOPIC,
      toEventSelector("TransferSingle(address,address,address,uint256,uint256)"),
    );
    assert.equal(
      TRANSFER_BATCH_TOPIC,
      toEventSelector("TransferBatch(address,address,address,uint256[],uint256[])"),
    );
    assert.equal(
      CONSECUTIVE_TRANSFER_TOPIC,
      toEventSelector("ConsecutiveTransfer(uint256,uint256,address,address)"),
    );
    assert.equal(PUNK_ASSIGN_TOPIC, toEventSelector("Assign(address,uint256)"));
    assert.equal(PUNK_TRANSFER_TOPIC, toEventSelector("PunkTransfer(address,address,uint256)"));
    assert.equal(PUNK_BOUGHT_TOPIC, toEventSelector("PunkBought(uint256,uint256,address,address)"));
  });

  test("the log filter asks for every event decodeLogs reads, once", () => {
    const events = [
      ERC721_TRANSFER,
      TRANSFER_SINGLE,
      TRANSFER_BATCH,
      CONSECUTIVE,
      ASSIGN,
      PUNK_TRANSFER,
      PUNK_BOUGHT,
    ];
    assert.deepEqual(new Set(TRANSFER_TOPICS), new Set(events.map((e) => toEventSelector(e))));
    assert.equal(TRANSFER_TOPICS.length, events.length);
  });
});

describe("ERC-721 Transfer (token id indexed)", () => {
  test("decodes to one erc721 transfer of amount 1, as viem reads it", () => {
    const log = eventLog({ address: NFT }, ERC721_TRANSFER, {
      from: ALICE,
      to: BOB,
      tokenId: 2n ** 256n - 1n,
    });
    const viem = decodeEventLog({
      abi: [ERC721_TRANSFER],
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
    });
    const result = decodeLogs([log], noTypes);
    assert.deepEqual(result.nft, [
      expectedNft(log, {
        tokenId: viem.args.tokenId,
        from: viem.args.from.toLowerCase() as Address,
        to: viem.args.to.toLowerCase() as Address,
        amount: 1n,
        standard: "erc721",
      }),
    ]);
    assert.deepEqual([result.fungible, result.malformed, result.unclassified], [[], [], []]);
  });

  test("addresses come out lower-case whatever the topic's case", () => {
    const mixed = getAddress(ALICE);
    const { topics } = encodeEvent(ERC721_TRANSFER, { from: mixed, to: BOB, tokenId: 1n });
    const upper = topics.map((t, i) => (i === 1 ? (`0x${t.slice(2).toUpperCase()}` as Hex) : t));
    const [transfer] = decodeLogs([chainLog({ address: NFT }, upper, "0x")], noTypes).nft;
    assert.equal(transfer?.from, ALICE);
  });

  test("from an ERC-20 that indexes its value, it is an amount, kept in an NFT transaction", () => {
    const typesOf = typesMap({ [TOKEN]: ["TYPE_ERC20"] });
    const payment = eventLog({ address: TOKEN, tx: 7 }, ERC721_TRANSFER, {
      from: BOB,
      to: ALICE,
      tokenId: 5000n,
    });
    const sale = eventLog({ address: NFT, tx: 7 }, ERC721_TRANSFER, { from: ALICE, to: BOB, tokenId: 3n });
    const result = decodeLogs([payment, sale], typesOf);
    assert.deepEqual(
      result.fungible.map((f) => [f.contract, f.from, f.to, f.amount]),
      [[TOKEN, BOB, ALICE, 5000n]],
    );
    assert.deepEqual(
      result.nft.map((t) => t.contract),
      [NFT],
    );
  });

  test("with data after its three indexed values it is malformed", () => {
    const { topics } = encodeEvent(ERC721_TRANSFER, { from: ALICE, to: BOB, tokenId: 1n });
    const log = chainLog({ address: NFT }, topics, encodeAbiParameters([{ type: "uint256" }], [1n]));
    assert.deepEqual(decodeLogs([log], noTypes).malformed, [log]);
  });
});

describe("ERC-20-shaped Transfer (from and to indexed, one data word)", () => {
  const make = (address: Address, tx = 1) =>
    eventLog({ address, tx }, ERC20_TRANSFER, { from: ALICE, to: BOB, value: 42n });

  test("is a legacy NFT transfer of token id = data for a TYPE_ERC721_LEGACY contract", () => {
    const log = make(NFT);
    const result = decodeLogs([log], typesMap({ [NFT]: ["TYPE_ERC721_LEGACY"] }));
    assert.deepEqual(result.nft, [
      expectedNft(log, { tokenId: 42n, from: ALICE, to: BOB, amount: 1n, standard: "legacy" }),
    ]);
  });

  test("is fungible for an ERC-20, also one that is an NFT too (ERC-20/ERC-721 hybrids)", () => {
    for (const types of [
      ["TYPE_ERC20"],
      ["TYPE_ERC20", "TYPE_ERC721_LEGACY"],
      ["TYPE_ERC20", "TYPE_ERC721"],
    ] as const) {
      const log = make(TOKEN, 3);
      const nft = eventLog({ address: NFT, tx: 3 }, ERC721_TRANSFER, { from: BOB, to: ALICE, tokenId: 1n });
      const result = decodeLogs([log, nft], typesMap({ [TOKEN]: types }));
      assert.deepEqual(
        result.fungible.map((f) => [f.contract, f.from, f.to, f.amount, f.logIndex]),
        [[TOKEN, ALICE, BOB, 42n, log.logIndex]],
        types.join(),
      );
      assert.equal(result.nft.length, 1);
    }
  });

  test("waits for classification when the emitter is unknown or its types give no reading", () => {
    const unknown = make(addr(0x51));
    const erc721Only = make(NFT);
    const result = decodeLogs([unknown, erc721Only], typesMap({ [NFT]: ["TYPE_ERC721"] }));
    assert.deepEqual(result.unclassified, [unknown, erc721Only]);
    assert.deepEqual([result.nft, result.fungible, result.malformed], [[], [], []]);
  });

  test("with a data length other than one word it is malformed", () => {
    const { topics } = encodeEvent(ERC20_TRANSFER, { from: ALICE, to: BOB, value: 1n });
    const long = chainLog(
      { address: TOKEN },
      topics,
      encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }], [1n, 2n]),
    );
    const short = chainLog({ address: TOKEN }, topics, "0x01");
    const empty = chainLog({ address: TOKEN }, topics, "0x");
    const result = decodeLogs([long, short, empty], typesMap({ [TOKEN]: ["TYPE_ERC20"] }));
    assert.deepEqual(result.malformed, [long, short, empty]);
  });
});

describe("unindexed Transfer (CryptoKitties style)", () => {
  test("decodes to a legacy transfer, as viem reads the data", () => {
    const log = eventLog({ address: NFT }, UNINDEXED_TRANSFER, { from: ALICE, to: BOB, tokenId: 1_234_567n });
    const viem = decodeEventLog({
      abi: [UNINDEXED_TRANSFER],
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
    });
    assert.deepEqual(decodeLogs([log], noTypes).nft, [
      expectedNft(log, {
        tokenId: viem.args.tokenId,
        from: viem.args.from.toLowerCase() as Address,
        to: viem.args.to.toLowerCase() as Address,
        amount: 1n,
        standard: "legacy",
      }),
    ]);
  });

  test("from an early ERC-20 that indexed nothing, it is an amount", () => {
    const log = eventLog({ address: TOKEN, tx: 9 }, UNINDEXED_TRANSFER, {
      from: ALICE,
      to: BOB,
      tokenId: 77n,
    });
    const nft = eventLog({ address: NFT, tx: 9 }, ERC721_TRANSFER, { from: BOB, to: ALICE, tokenId: 1n });
    const result = decodeLogs([log, nft], typesMap({ [TOKEN]: ["TYPE_ERC20"] }));
    assert.deepEqual(
      result.fungible.map((f) => f.amount),
      [77n],
    );
  });

  test("with two or four data words, or two topics, it is malformed", () => {
    const words = (n: number) => `0x${"00".repeat(32 * n)}` as Hex;
    const logs = [
      chainLog({ address: NFT }, [TRANSFER_TOPIC], words(2)),
      chainLog({ address: NFT }, [TRANSFER_TOPIC], words(4)),
      chainLog(
        { address: NFT },
        [TRANSFER_TOPIC, encodeEvent(ERC20_TRANSFER, { from: ALICE, to: BOB, value: 1n }).topics[1] as Hex],
        words(2),
      ),
      chainLog({ address: NFT }, [], words(3)),
    ];
    const result = decodeLogs(logs, typesMap({ [NFT]: ["TYPE_ERC721_LEGACY"] }));
    assert.deepEqual(result.malformed, logs.slice(0, 3));
    assert.deepEqual(result.nft, []);
  });
});

describe("ERC-1155", () => {
  const typesOf = typesMap({ [NFT]: ["TYPE_ERC1155"] });

  test("TransferSingle decodes id and value, as viem reads them", () => {
    const log = eventLog({ address: NFT }, TRANSFER_SINGLE, {
      operator: OPERATOR,
      from: ZERO,
      to: BOB,
      id: 9n,
      value: 25n,
    });
    const viem = decodeEventLog({
      abi: [TRANSFER_SINGLE],
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
    });
    assert.deepEqual(decodeLogs([log], typesOf).nft, [
      expectedNft(log, {
        tokenId: viem.args.id,
        from: viem.args.from.toLowerCase() as Address,
        to: viem.args.to.toLowerCase() as Address,
        amount: viem.args.value,
        standard: "erc1155",
      }),
    ]);
  });

  test("a zero-value TransferSingle moves nothing and is skipped", () => {
    const log = eventLog({ address: NFT }, TRANSFER_SINGLE, {
      operator: OPERATOR,
      from: ALICE,
      to: BOB,
      id: 9n,
      value: 0n,
    });
    const result = decodeLogs([log], typesOf);
    assert.deepEqual([result.nft, result.malformed], [[], []]);
  });

  test("TransferSingle with truncated data or a missing topic is malformed", () => {
    const good = encodeEvent(TRANSFER_SINGLE, {
      operator: OPERATOR,
      from: ALICE,
      to: BOB,
      id: 1n,
      value: 1n,
    });
    const truncated = chainLog({ address: NFT }, good.topics, good.data.slice(0, -2) as Hex);
    const threeTopics = chainLog({ address: NFT }, good.topics.slice(0, 3), good.data);
    assert.deepEqual(decodeLogs([truncated, threeTopics], typesOf).malformed, [truncated, threeTopics]);
  });

  test("TransferBatch gives one transfer per non-zero entry, seq = its position", () => {
    const ids = [5n, 6n, 7n, 5n];
    const values = [1n, 0n, 3n, 2n];
    const log = eventLog({ address: NFT }, TRANSFER_BATCH, {
      operator: OPERATOR,
      from: ALICE,
      to: BOB,
      ids,
      values,
    });
    const viem = decodeEventLog({
      abi: [TRANSFER_BATCH],
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
    });
    const expected = viem.args.ids
      .map((id, i) => ({ id, value: viem.args.values[i] ?? 0n, seq: i }))
      .filter((entry) => entry.value !== 0n)
      .map((entry) =>
        expectedNft(log, {
          tokenId: entry.id,
          from: ALICE,
          to: BOB,
          amount: entry.value,
          standard: "erc1155",
          seq: entry.seq,
        }),
      );
    assert.equal(expected.length, 3);
    assert.deepEqual(decodeLogs([log], typesOf).nft, expected);
  });

  test("an empty TransferBatch is well-formed and moves nothing", () => {
    const log = eventLog({ address: NFT }, TRANSFER_BATCH, {
      operator: OPERATOR,
      from: ALICE,
      to: BOB,
      ids: [],
      values: [],
    });
    const result = decodeLogs([log], typesOf);
    assert.deepEqual([result.nft, result.malformed], [[], []]);
  });

  test("TransferBatch is read by its offsets, not assuming the canonical layout", () => {
    // Head, then the values array before the ids array: legal ABI, unusual order.
    const word = (n: bigint) => n.toString(16).padStart(64, "0");
    const data =
      `0x${word(0xa0n)}${word(0x40n)}${word(2n)}${word(10n)}${word(20n)}${word(2n)}${word(1n)}${word(2n)}` as Hex;
    const { topics } = encodeEvent(TRANSFER_BATCH, {
      operator: OPERATOR,
      from: ALICE,
      to: BOB,
      ids: [],
      values: [],
    });
    const log = chainLog({ address: NFT }, topics, data);
    const viem = decodeEventLog({
      abi: [TRANSFER_BATCH],
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
    });
    assert.deepEqual(viem.args.ids, [1n, 2n]);
    assert.deepEqual(
      decodeLogs([log], typesOf).nft.map((t) => [t.tokenId, t.amount, t.seq]),
      [
        [1n, 10n, 0],
        [2n, 20n, 1],
      ],
    );
  });

  test("TransferBatch with bad offsets, lengths or mismatched arrays is malformed", () => {
    const word = (n: bigint) => n.toString(16).padStart(64, "0");
    const { topics } = encodeEvent(TRANSFER_BATCH, {
      operator: OPERATOR,
      from: ALICE,
      to: BOB,
      ids: [],
      values: [],
    });
    const valid = encodeEvent(TRANSFER_BATCH, {
      operator: OPERATOR,
      from: ALICE,
      to: BOB,
      ids: [1n, 2n],
      values: [1n, 1n],
    }).data;
    const datas: Hex[] = [
      // ids and values of different lengths
      encodeAbiParameters([{ type: "uint256[]" }, { type: "uint256[]" }], [[1n, 2n], [1n]]),
      // ids offset past the end
      `0x${word(0x1000n)}${valid.slice(66)}`,
      // values offset at the very end: no room for its length word
      `0x${valid.slice(2, 66)}${word(BigInt((valid.length - 2) / 2))}${valid.slice(130)}`,
      // ids offset of 2**255
      `0x${word(2n ** 255n)}${valid.slice(66)}`,
      // ids length larger than the data
      `0x${valid.slice(2, 130)}${word(1000n)}${valid.slice(194)}`,
      // truncated by one word
      valid.slice(0, -64) as Hex,
      // only the head
      valid.slice(0, 130) as Hex,
      // an odd number of hex digits
      `${valid}0` as Hex,
    ];
    const logs = datas.map((data) => chainLog({ address: NFT }, topics, data));
    // The first is valid ABI (viem reads arrays of 2 and 1); viem rejects every other one.
    const [mismatched, ...broken] = logs;
    const lengths = decodeEventLog({
      abi: [TRANSFER_BATCH],
      topics: topics as [Hex, ...Hex[]],
      data: mismatched?.data,
    });
    assert.deepEqual([lengths.args.ids.length, lengths.args.values.length], [2, 1]);
    for (const [i, log] of broken.entries()) {
      assert.throws(
        () => decodeEventLog({ abi: [TRANSFER_BATCH], topics: topics as [Hex, ...Hex[]], data: log.data }),
        `case ${i + 1}`,
      );
    }
    const result = decodeLogs(logs, typesOf);
    assert.deepEqual(result.malformed, logs);
    assert.deepEqual(result.nft, []);
  });
});

describe("ERC-2309 ConsecutiveTransfer", () => {
  const consecutive = (fromTokenId: bigint, toTokenId: bigint) =>
    eventLog({ address: NFT }, CONSECUTIVE, { fromTokenId, toTokenId, fromAddress: ZERO, toAddress: ALICE });

  test("gives one transfer per id of the inclusive range, seq = offset", () => {
    const log = consecutive(100n, 104n);
    const viem = decodeEventLog({
      abi: [CONSECUTIVE],
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
    });
    const expected = [];
    for (let id = viem.args.fromTokenId; id <= viem.args.toTokenId; id++) {
      expected.push(
        expectedNft(log, {
          tokenId: id,
          from: ZERO,
          to: ALICE,
          amount: 1n,
          standard: "erc2309",
          seq: Number(id - 100n),
        }),
      );
    }
    assert.equal(expected.length, 5);
    assert.deepEqual(decodeLogs([log], noTypes).nft, expected);
  });

  test("a single-id range gives one transfer", () => {
    assert.deepEqual(
      decodeLogs([consecutive(7n, 7n)], noTypes).nft.map((t) => t.tokenId),
      [7n],
    );
  });

  test("a reversed range is malformed", () => {
    const reversed = consecutive(10n, 9n);
    assert.deepEqual(decodeLogs([reversed], noTypes).malformed, [reversed]);
  });

  test("ranges expand up to their contract's budget in a block; the events past it are spam, with their size", () => {
    const budget = CONSECUTIVE_BUDGET_PER_CONTRACT_BLOCK;
    const half = consecutive(1n, budget / 2n);
    const rest = consecutive(budget / 2n + 1n, budget);
    const over = consecutive(budget + 1n, budget + 1n);
    const huge = consecutive(0n, 2n ** 256n - 1n);
    const result = decodeLogs([half, rest, over, huge], noTypes);
    assert.equal(BigInt(result.nft.length), budget);
    assert.equal(result.nft.at(-1)?.tokenId, budget);
    assert.deepEqual(result.spam, [
      { log: over, tokens: 1n },
      { log: huge, tokens: 2n ** 256n },
    ]);
    assert.deepEqual(result.malformed, []);
  });

  test("the budget is per contract and per block, and a block's contracts share a larger one", () => {
    const perContract = CONSECUTIVE_BUDGET_PER_CONTRACT_BLOCK;
    const contracts = Number(CONSECUTIVE_BUDGET_PER_BLOCK / perContract) + 1;
    const full = (address: Address, block: number) =>
      eventLog({ address, block }, CONSECUTIVE, {
        fromTokenId: 1n,
        toTokenId: perContract,
        fromAddress: ZERO,
        toAddress: ALICE,
      });
    const inBlock = Array.from({ length: contracts }, (_, i) => full(addr(0x100 + i), 7));
    const nextBlock = full(addr(0x100), 8);
    const result = decodeLogs([...inBlock, nextBlock], noTypes);
    assert.equal(BigInt(result.nft.length), CONSECUTIVE_BUDGET_PER_BLOCK + perContract);
    assert.deepEqual(
      result.spam.map((s) => s.log),
      [inBlock.at(-1)],
    );
    assert.equal(result.nft.at(-1)?.blockNumber, 8);
  });
});

describe("CryptoPunks", () => {
  const typesOf = typesMap({ [PUNKS]: ["TYPE_CRYPTOPUNKS"], [TOKEN]: ["TYPE_ERC20"] });
  /** The ERC-20-shaped Transfer(from, to, 1) the contract emits before each punk move. */
  const shadow = (tx: number, from: Address, to: Address) =>
    eventLog({ address: PUNKS, tx }, ERC20_TRANSFER, { from, to, value: 1n });

  test("Assign is a mint from the zero address", () => {
    const log = eventLog({ address: PUNKS }, ASSIGN, { to: ALICE, punkIndex: 3100n });
    assert.deepEqual(decodeLogs([log], typesOf).nft, [
      expectedNft(log, { tokenId: 3100n, from: ZERO, to: ALICE, amount: 1n, standard: "punks" }),
    ]);
  });

  test("transferPunk: Transfer + PunkTransfer count once", () => {
    const logs = [
      shadow(20, ALICE, BOB),
      eventLog({ address: PUNKS, tx: 20 }, PUNK_TRANSFER, { from: ALICE, to: BOB, punkIndex: 7804n }),
    ];
    const result = decodeLogs(logs, typesOf);
    assert.deepEqual(result.nft, [
      expectedNft(logs[1] as ChainLog, {
        tokenId: 7804n,
        from: ALICE,
        to: BOB,
        amount: 1n,
        standard: "punks",
      }),
    ]);
    assert.deepEqual([result.fungible, result.malformed, result.unclassified], [[], [], []]);
  });

  test("buyPunk: Transfer + PunkNoLongerForSale + PunkBought count once", () => {
    const logs = [
      shadow(21, ALICE, BOB),
      eventLog({ address: PUNKS, tx: 21 }, PUNK_NO_LONGER_FOR_SALE, { punkIndex: 5217n }),
      eventLog({ address: PUNKS, tx: 21 }, PUNK_BOUGHT, {
        punkIndex: 5217n,
        value: 10n ** 18n,
        fromAddress: ALICE,
        toAddress: BOB,
      }),
    ];
    const result = decodeLogs(logs, typesOf);
    assert.deepEqual(result.nft, [
      expectedNft(logs[2] as ChainLog, {
        tokenId: 5217n,
        from: ALICE,
        to: BOB,
        amount: 1n,
        standard: "punks",
      }),
    ]);
    assert.deepEqual(result.malformed, []);
  });

  test("acceptBidForPunk: the zero toAddress of PunkBought is the paired Transfer's recipient", () => {
    const logs = [
      shadow(22, ALICE, CAROL),
      eventLog({ address: PUNKS, tx: 22 }, PUNK_BOUGHT, {
        punkIndex: 1n,
        value: 0n,
        fromAddress: ALICE,
        toAddress: ZERO,
      }),
    ];
    const result = decodeLogs(logs, typesOf);
    assert.deepEqual(result.nft, [
      expectedNft(logs[1] as ChainLog, {
        tokenId: 1n,
        from: ALICE,
        to: CAROL,
        amount: 1n,
        standard: "punks",
      }),
    ]);
    assert.deepEqual(result.malformed, []);
  });

  test("a PunkBought that comes before its Transfer does not pair with it", () => {
    const bought = eventLog({ address: PUNKS, tx: 28 }, PUNK_BOUGHT, {
      punkIndex: 1n,
      value: 0n,
      fromAddress: ALICE,
      toAddress: ZERO,
    });
    const later = shadow(28, ALICE, CAROL);
    assert.deepEqual(decodeLogs([later, bought], typesOf).malformed, [bought, later]);
  });

  test("several punk moves in one transaction each pair with their own Transfer", () => {
    const logs = [
      shadow(23, ALICE, BOB),
      eventLog({ address: PUNKS, tx: 23 }, PUNK_BOUGHT, {
        punkIndex: 1n,
        value: 0n,
        fromAddress: ALICE,
        toAddress: ZERO,
      }),
      shadow(23, CAROL, ALICE),
      eventLog({ address: PUNKS, tx: 23 }, PUNK_BOUGHT, {
        punkIndex: 2n,
        value: 0n,
        fromAddress: CAROL,
        toAddress: ZERO,
      }),
      shadow(23, BOB, CAROL),
      eventLog({ address: PUNKS, tx: 23 }, PUNK_TRANSFER, { from: BOB, to: CAROL, punkIndex: 3n }),
    ];
    const result = decodeLogs(logs, typesOf);
    assert.deepEqual(
      result.nft.map((t) => [t.tokenId, t.from, t.to]),
      [
        [1n, ALICE, BOB],
        [2n, CAROL, ALICE],
        [3n, BOB, CAROL],
      ],
    );
    assert.deepEqual(result.malformed, []);
  });

  test("an unpaired Transfer, or a buyer-less PunkBought without one, is malformed", () => {
    const lonely = shadow(24, ALICE, BOB);
    const buyerless = eventLog({ address: PUNKS, tx: 25 }, PUNK_BOUGHT, {
      punkIndex: 1n,
      value: 0n,
      fromAddress: ALICE,
      toAddress: ZERO,
    });
    // A shadow from another seller does not belong to this sale.
    const otherSeller = shadow(26, CAROL, BOB);
    const mismatched = eventLog({ address: PUNKS, tx: 26 }, PUNK_BOUGHT, {
      punkIndex: 2n,
      value: 0n,
      fromAddress: ALICE,
      toAddress: ZERO,
    });
    const result = decodeLogs([lonely, buyerless, otherSeller, mismatched], typesOf);
    assert.deepEqual(result.nft, []);
    assert.deepEqual(result.malformed, [lonely, buyerless, otherSeller, mismatched]);
  });

  test("a punk move is an NFT transaction: its WETH payment is kept", () => {
    const payment = eventLog({ address: TOKEN, tx: 27 }, ERC20_TRANSFER, { from: BOB, to: ALICE, value: 5n });
    const logs = [
      payment,
      shadow(27, ALICE, BOB),
      eventLog({ address: PUNKS, tx: 27 }, PUNK_TRANSFER, { from: ALICE, to: BOB, punkIndex: 9n }),
    ];
    assert.deepEqual(
      decodeLogs(logs, typesOf).fungible.map((f) => f.logIndex),
      [payment.logIndex],
    );
  });

  test("punk events of other contracts are not punk moves", () => {
    const other = addr(0x0123);
    const logs = [
      eventLog({ address: other }, ASSIGN, { to: ALICE, punkIndex: 1n }),
      eventLog({ address: other }, PUNK_TRANSFER, { from: ALICE, to: BOB, punkIndex: 1n }),
    ];
    const known = decodeLogs(logs, typesMap({ [other]: ["TYPE_ERC20"] }));
    assert.deepEqual([known.nft, known.malformed, known.unclassified], [[], [], []]);
    assert.deepEqual(decodeLogs(logs, noTypes).unclassified, logs);
  });

  test("punk events with a wrong layout are malformed", () => {
    const { topics } = encodeEvent(ASSIGN, { to: ALICE, punkIndex: 1n });
    const bad = chainLog({ address: PUNKS }, topics, "0x");
    assert.deepEqual(decodeLogs([bad], typesOf).malformed, [bad]);
  });
});

describe("CryptoPunksMarket on a development chain", () => {
  let anvil: Anvil;
  let publicClient: PublicClient;
  let walletClient: WalletClient;
  let accounts: Address[];
  const { abi, bytecode } = JSON.parse(
    readFileSync(new URL("../../contracts/artifacts/CryptoPunksMarket.json", import.meta.url), "utf8"),
  ) as { abi: Abi; bytecode: Hex };

  before(async () => {
    anvil = await startAnvil();
    publicClient = createPublicClient({ transport: http(anvil.url), pollingInterval: 20 });
    walletClient = createWalletClient({ transport: http(anvil.url) });
    accounts = (await walletClient.requestAddresses()).map((a) => a.toLowerCase() as Address);
  });

  after(async () => {
    await anvil?.stop();
  });

  test("the contract's own event sequences decode to one transfer per move", async () => {
    const [owner, alice, bob, carol, dave] = accounts as [Address, Address, Address, Address, Address];
    const deployHash = await walletClient.deployContract({
      abi,
      bytecode,
      args: [10n],
      account: owner,
      chain: null,
    });
    const punks = (await publicClient.waitForTransactionReceipt({ hash: deployHash })).contractAddress;
    assert.ok(punks, "the market was deployed");
    const send = async (from: Address, functionName: string, args: unknown[], value = 0n) => {
      const hash = await walletClient.writeContract({
        address: punks,
        abi,
        functionName,
        args,
        account: from,
        value,
        chain: null,
      });
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      assert.equal(receipt.status, "success", functionName);
    };
    await send(owner, "setInitialOwner", [alice, 0n]);
    await send(owner, "setInitialOwner", [alice, 1n]);
    await send(owner, "allInitialOwnersAssigned", []);
    await send(bob, "getPunk", [2n]);
    await send(alice, "transferPunk", [bob, 0n]);
    await send(bob, "offerPunkForSale", [0n, parseEther("1")]);
    await send(carol, "buyPunk", [0n], parseEther("1"));
    await send(dave, "enterBidForPunk", [1n], parseEther("2"));
    await send(alice, "acceptBidForPunk", [1n, 0n]);

    const raw = (await publicClient.request({
      method: "eth_getLogs",
      params: [{ address: punks, fromBlock: "0x0", toBlock: "latest" }],
    })) as Log<`0x${string}`, `0x${string}`, false>[];
    const logs: ChainLog[] = raw.map((log) => ({
      address: log.address.toLowerCase() as Address,
      topics: log.topics as Hex[],
      data: log.data,
      blockNumber: Number(log.blockNumber),
      blockHash: log.blockHash,
      logIndex: Number(log.logIndex),
      transactionHash: log.transactionHash,
      transactionIndex: Number(log.transactionIndex),
    }));
    // The original contract's quirk is really there: acceptBidForPunk's PunkBought names no buyer.
    const lastBought = logs.filter((log) => log.topics[0] === toEventSelector(PUNK_BOUGHT)).at(-1);
    assert.ok(lastBought, "a PunkBought was logged");
    const quirk = decodeEventLog({
      abi: [PUNK_BOUGHT],
      topics: lastBought.topics as [Hex, ...Hex[]],
      data: lastBought.data,
    });
    assert.deepEqual([quirk.args.toAddress, quirk.args.value], [ZERO, 0n]);

    const result = decodeLogs(logs, typesMap({ [punks.toLowerCase() as Address]: ["TYPE_CRYPTOPUNKS"] }));
    assert.deepEqual(
      result.nft.map((t) => [t.tokenId, t.from, t.to, t.standard]),
      [
        [0n, ZERO, alice, "punks"],
        [1n, ZERO, alice, "punks"],
        [2n, ZERO, bob, "punks"],
        [0n, alice, bob, "punks"],
        [0n, bob, carol, "punks"],
        [1n, alice, dave, "punks"],
      ],
    );
    assert.deepEqual([result.malformed, result.unclassified, result.fungible], [[], [], []]);
  });
});

describe("payments and noise", () => {
  const typesOf = typesMap({ [TOKEN]: ["TYPE_ERC20"], [NFT]: ["TYPE_ERC721"] });

  test("ERC-20 transfers are kept only in transactions that move an NFT", () => {
    const inSale = eventLog({ address: TOKEN, tx: 30 }, ERC20_TRANSFER, { from: BOB, to: ALICE, value: 10n });
    const sale = eventLog({ address: NFT, tx: 30 }, ERC721_TRANSFER, { from: ALICE, to: BOB, tokenId: 1n });
    const swap = eventLog({ address: TOKEN, tx: 31 }, ERC20_TRANSFER, { from: BOB, to: CAROL, value: 11n });
    // A zero-value ERC-1155 transfer moves no NFT, so its transaction is no sale.
    const zero = eventLog({ address: NFT, tx: 32 }, TRANSFER_SINGLE, {
      operator: BOB,
      from: BOB,
      to: CAROL,
      id: 1n,
      value: 0n,
    });
    const withZero = eventLog({ address: TOKEN, tx: 32 }, ERC20_TRANSFER, {
      from: CAROL,
      to: BOB,
      value: 12n,
    });
    const result = decodeLogs([inSale, sale, swap, zero, withZero], typesOf);
    assert.deepEqual(
      result.fungible.map((f) => [f.txHash, f.amount]),
      [[txHash(30), 10n]],
    );
  });

  test("other events are ignored", () => {
    const approval = eventLog({ address: TOKEN }, APPROVAL, { owner: ALICE, spender: BOB, value: 1n });
    const result = decodeLogs([approval, chainLog({ address: TOKEN }, [], "0x")], noTypes);
    assert.deepEqual([result.nft, result.fungible, result.malformed, result.unclassified], [[], [], [], []]);
  });

  test("non-hex data never throws: the log is malformed", () => {
    const { topics } = encodeEvent(ERC20_TRANSFER, { from: ALICE, to: BOB, value: 1n });
    const badData = chainLog({ address: NFT }, topics, `0x${"zz".repeat(32)}`);
    const single = encodeEvent(TRANSFER_SINGLE, {
      operator: OPERATOR,
      from: ALICE,
      to: BOB,
      id: 1n,
      value: 1n,
    });
    const badSingle = chainLog({ address: NFT }, single.topics, `0x${"g".repeat(128)}`);
    const id = encodeEvent(ERC721_TRANSFER, { from: ALICE, to: BOB, tokenId: 1n }).topics;
    const badTopic = chainLog({ address: NFT }, [...id.slice(0, 3), `0x${"q".repeat(64)}`], "0x");
    const result = decodeLogs([badData, badSingle, badTopic], typesMap({ [NFT]: ["TYPE_ERC721_LEGACY"] }));
    assert.deepEqual(result.malformed, [badData, badSingle, badTopic]);
  });
});

describe("classification inputs", () => {
  test("emittedShapes sorts each contract's well-formed transfer events by layout", () => {
    const logs = [
      eventLog({ address: NFT }, ERC721_TRANSFER, { from: ALICE, to: BOB, tokenId: 1n }),
      eventLog({ address: NFT }, UNINDEXED_TRANSFER, { from: ALICE, to: BOB, tokenId: 1n }),
      eventLog({ address: TOKEN }, ERC20_TRANSFER, { from: ALICE, to: BOB, value: 1n }),
      chainLog({ address: TOKEN }, [TRANSFER_TOPIC], "0x"),
      eventLog({ address: PUNKS }, ASSIGN, { to: ALICE, punkIndex: 1n }),
      eventLog({ address: PUNKS }, PUNK_BOUGHT, {
        punkIndex: 1n,
        value: 0n,
        fromAddress: ALICE,
        toAddress: BOB,
      }),
      eventLog({ address: OPERATOR }, TRANSFER_BATCH, {
        operator: ALICE,
        from: ALICE,
        to: BOB,
        ids: [],
        values: [],
      }),
      eventLog({ address: OPERATOR }, CONSECUTIVE, {
        fromTokenId: 1n,
        toTokenId: 2n,
        fromAddress: ZERO,
        toAddress: BOB,
      }),
      eventLog({ address: OPERATOR }, APPROVAL, { owner: ALICE, spender: BOB, value: 1n }),
    ];
    assert.deepEqual(
      emittedShapes(logs),
      new Map([
        [NFT, new Set(["erc721-transfer", "unindexed-transfer"])],
        [TOKEN, new Set(["erc20-transfer"])],
        [PUNKS, new Set(["punk-assign", "punk-transfer"])],
        [OPERATOR, new Set(["erc1155-transfer", "consecutive-transfer"])],
      ]),
    );
    assert.equal(eventShape(logs[3] as ChainLog), undefined);
  });
});

describe("many logs at once", () => {
  test("decodes 100,000 ERC-721 Transfer logs, each in place", () => {
    const count = 100_000;
    const template = encodeEvent(ERC721_TRANSFER, { from: ALICE, to: BOB, tokenId: 0n });
    const logs: ChainLog[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const tokenTopic = `0x${i.toString(16).padStart(64, "0")}` as Hex;
      logs[i] = chainLog(
        { address: NFT, tx: i >> 4, block: 1000 + (i >> 10), logIndex: i & 1023 },
        [template.topics[0] as Hex, template.topics[1] as Hex, template.topics[2] as Hex, tokenTopic],
        "0x",
      );
    }
    const result = decodeLogs(logs, noTypes);
    assert.equal(result.nft.length, count);
    for (const i of [0, 1, 4095, count - 1]) {
      const transfer = result.nft[i];
      assert.equal(transfer?.tokenId, BigInt(i));
      assert.equal(transfer?.from, ALICE);
      assert.equal(transfer?.logIndex, i & 1023);
    }
  });
});
