/**
 * Two complete mainnet blocks (17173049-17173050, ethereum-etl's export of them) decoded end to
 * end. Expectations come from the raw logs through viem's ABI decoder and from ethereum-etl's own
 * token_transfers export, never from decodeLogs itself.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { decodeEventLog, parseAbi, parseAbiItem, toEventSelector, type Hex as ViemHex } from "viem";
import type { Address, Hex } from "../../src/core/hex.ts";
import type { ChainLog, ContractType, FungibleTransfer, NftTransfer } from "../../src/core/types.ts";
import { decodeLogs } from "../../src/indexer/decode/decode-logs.ts";
import { emittedShapes } from "../../src/indexer/decode/shapes.ts";

const DIR = new URL("../fixtures/realdata/ethereum-etl/blocks_17173049_17173050/", import.meta.url);

interface EtlLog {
  log_index: number;
  transaction_hash: string;
  transaction_index: number;
  address: string;
  data: string;
  topics: string[];
  block_number: number;
  block_hash: string;
}

interface EtlTokenTransfer {
  token_address: string;
  from_address: string;
  to_address: string;
  /** JSON number, possibly beyond 2**53: read from the raw text. */
  value: string;
  transaction_hash: string;
  log_index: number;
}

function readLines(name: string): string[] {
  return readFileSync(new URL(name, DIR), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
}

const etlLogs: EtlLog[] = readLines("expected_logs.json").map((line) => JSON.parse(line) as EtlLog);
// Quote the numeric value so JSON.parse keeps every digit.
const etlTransfers: EtlTokenTransfer[] = readLines("expected_token_transfers.json").map(
  (line) => JSON.parse(line.replace(/"value": (\d+)/, '"value": "$1"')) as EtlTokenTransfer,
);

/** ethereum-etl's log as the chain layer hands logs on. */
function toChainLog(log: EtlLog): ChainLog {
  return {
    address: log.address.toLowerCase() as Address,
    topics: log.topics as Hex[],
    data: log.data as Hex,
    blockNumber: log.block_number,
    blockHash: log.block_hash as Hex,
    logIndex: log.log_index,
    transactionHash: log.transaction_hash as Hex,
    transactionIndex: log.transaction_index,
  };
}

const logs = etlLogs.map(toChainLog);

const TRANSFER = toEventSelector("Transfer(address,address,uint256)");
const TRANSFER_SINGLE = toEventSelector("TransferSingle(address,address,address,uint256,uint256)");
const TRANSFER_BATCH = toEventSelector("TransferBatch(address,address,address,uint256[],uint256[])");

const erc721Abi = parseAbi([
  "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
]);
const erc20Abi = parseAbi(["event Transfer(address indexed from, address indexed to, uint256 value)"]);
const erc1155Abi = parseAbi([
  "event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)",
  "event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)",
]);

const lower = (address: string) => address.toLowerCase() as Address;
const topicsOf = (log: ChainLog) => log.topics as [ViemHex, ...ViemHex[]];

const isErc721Transfer = (log: ChainLog) => log.topics[0] === TRANSFER && log.topics.length === 4;
const isErc20Transfer = (log: ChainLog) => log.topics[0] === TRANSFER && log.topics.length === 3;
const isErc1155 = (log: ChainLog) => log.topics[0] === TRANSFER_SINGLE || log.topics[0] === TRANSFER_BATCH;

/** What a classifier would say of these emitters: the layout of their Transfers decides. */
const typesByAddress = new Map<Address, ReadonlySet<ContractType>>();
for (const log of logs) {
  const type: ContractType | undefined = isErc721Transfer(log)
    ? "TYPE_ERC721"
    : isErc20Transfer(log)
      ? "TYPE_ERC20"
      : isErc1155(log)
        ? "TYPE_ERC1155"
        : undefined;
  if (type === undefined) continue;
  const known = typesByAddress.get(log.address);
  assert.ok(known === undefined || known.has(type), `${log.address} emits two kinds of transfer`);
  typesByAddress.set(log.address, new Set([type]));
}
const typesOf = (address: Address) => typesByAddress.get(address);

function place(log: ChainLog) {
  return {
    contract: log.address,
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
    txHash: log.transactionHash,
    txIndex: log.transactionIndex,
  };
}

/** Every NFT movement of the blocks, read with viem's ABI decoder. */
function expectedNftTransfers(): NftTransfer[] {
  const expected: NftTransfer[] = [];
  for (const log of logs) {
    if (isErc721Transfer(log)) {
      const { args } = decodeEventLog({
        abi: erc721Abi,
        topics: topicsOf(log),
        data: log.data,
        strict: true,
      });
      expected.push({
        ...place(log),
        tokenId: args.tokenId,
        from: lower(args.from),
        to: lower(args.to),
        amount: 1n,
        seq: 0,
        standard: "erc721",
      });
    } else if (isErc1155(log)) {
      const event = decodeEventLog({ abi: erc1155Abi, topics: topicsOf(log), data: log.data, strict: true });
      const entries =
        event.eventName === "TransferSingle"
          ? [{ id: event.args.id, value: event.args.value }]
          : event.args.ids.map((id, i) => ({ id, value: event.args.values[i] ?? 0n }));
      for (const [seq, entry] of entries.entries()) {
        if (entry.value === 0n) continue;
        expected.push({
          ...place(log),
          tokenId: entry.id,
          from: lower(event.args.from),
          to: lower(event.args.to),
          amount: entry.value,
          seq,
          standard: "erc1155",
        });
      }
    }
  }
  return expected;
}

const decoded = decodeLogs(logs, typesOf);
const expectedNft = expectedNftTransfers();
const nftTransactions = new Set(expectedNft.map((t) => t.txHash));

describe("mainnet blocks 17173049-17173050", () => {
  test("the fixture is complete: 681 logs over two blocks", () => {
    assert.equal(logs.length, 681);
    assert.deepEqual([...new Set(logs.map((l) => l.blockNumber))], [17173049, 17173050]);
  });

  test("decode to exactly the NFT transfers they contain", () => {
    assert.equal(expectedNft.length, 10);
    assert.equal(
      expectedNft.some((t) => t.standard === "erc1155"),
      true,
    );
    assert.deepEqual(decoded.nft, expectedNft);
  });

  test("nothing is malformed or left unclassified once emitters are typed", () => {
    assert.deepEqual(decoded.malformed, []);
    assert.deepEqual(decoded.unclassified, []);
  });

  test("agree with ethereum-etl's token transfers where they overlap", () => {
    // ethereum-etl reads 3- and 4-topic Transfers alike: value is the data word or the 4th topic.
    const transferLogs = logs.filter((log) => log.topics[0] === TRANSFER && log.topics.length >= 3);
    assert.equal(etlTransfers.length, transferLogs.length);
    const etlByLog = new Map(etlTransfers.map((t) => [`${t.transaction_hash}:${t.log_index}`, t]));
    let erc721 = 0;
    for (const transfer of decoded.nft.filter((t) => t.standard === "erc721")) {
      const etl = etlByLog.get(`${transfer.txHash}:${transfer.logIndex}`);
      assert.ok(etl, `ethereum-etl lacks ${transfer.txHash}:${transfer.logIndex}`);
      assert.deepEqual(
        [etl.token_address, etl.from_address, etl.to_address, BigInt(etl.value)],
        [transfer.contract, transfer.from, transfer.to, transfer.tokenId],
      );
      erc721++;
    }
    assert.equal(erc721, logs.filter(isErc721Transfer).length);
    for (const transfer of decoded.fungible) {
      const etl = etlByLog.get(`${transfer.txHash}:${transfer.logIndex}`);
      assert.ok(etl, `ethereum-etl lacks ${transfer.txHash}:${transfer.logIndex}`);
      assert.deepEqual(
        [etl.token_address, etl.from_address, etl.to_address, BigInt(etl.value)],
        [transfer.contract, transfer.from, transfer.to, transfer.amount],
      );
    }
  });

  test("ERC-20 transfers are kept only in the transactions that move an NFT", () => {
    const expected: FungibleTransfer[] = logs
      .filter((log) => isErc20Transfer(log) && nftTransactions.has(log.transactionHash))
      .map((log) => {
        const { args } = decodeEventLog({
          abi: erc20Abi,
          topics: topicsOf(log),
          data: log.data,
          strict: true,
        });
        const { contract, blockNumber, logIndex, txHash, txIndex } = place(log);
        return {
          contract,
          from: lower(args.from),
          to: lower(args.to),
          amount: args.value,
          blockNumber,
          logIndex,
          txHash,
          txIndex,
        };
      });
    assert.equal(expected.length > 0 && expected.length < logs.filter(isErc20Transfer).length, true);
    assert.deepEqual(decoded.fungible, expected);
  });

  test("the Blur sale: Azuki moves as OrdersMatched says, paid in Blur Pool", () => {
    const tx = "0x63fd57422f2051d8307eca6fa1e2874759bef24549be34cc820a443efc5f9e90";
    const ordersMatched = parseAbiItem([
      "event OrdersMatched(address indexed maker, address indexed taker, Order sell, bytes32 sellHash, Order buy, bytes32 buyHash)",
      "struct Order { address trader; uint8 side; address matchingPolicy; address collection; uint256 tokenId; uint256 amount; address paymentToken; uint256 price; uint256 listingTime; uint256 expirationTime; Fee[] fees; uint256 salt; bytes extraParams; }",
      "struct Fee { uint16 rate; address recipient; }",
    ]);
    const matchLog = logs.find(
      (l) => l.transactionHash === tx && l.topics[0] === toEventSelector(ordersMatched),
    );
    assert.ok(matchLog, "OrdersMatched is in the transaction");
    const { args } = decodeEventLog({
      abi: [ordersMatched],
      topics: topicsOf(matchLog),
      data: matchLog.data,
    });
    const sale = decoded.nft.filter((t) => t.txHash === tx);
    assert.deepEqual(
      sale.map((t) => [t.contract, t.tokenId, t.from, t.to, t.standard]),
      [
        [
          lower(args.sell.collection),
          args.sell.tokenId,
          lower(args.sell.trader),
          lower(args.buy.trader),
          "erc721",
        ],
      ],
    );
    // Azuki #1527, as read from the Transfer's own topics.
    assert.deepEqual(
      [sale[0]?.contract, sale[0]?.tokenId],
      ["0xed5af388653567af2f388e6224dc7c4b3241c544", 1527n],
    );
    const payments = decoded.fungible.filter((f) => f.txHash === tx);
    assert.equal(
      payments.length > 0 && payments.every((f) => f.contract === lower(args.sell.paymentToken)),
      true,
    );
    assert.equal(
      payments.some((f) => f.amount === args.sell.price && f.from === lower(args.buy.trader)),
      true,
    );
  });

  test("the Seaport 1.4 sale: the offered ERC-721 moves to the recipient", () => {
    const tx = "0x42ace258a44863bdbe83eb5dad6f999e5b6ab775b38529db5a3af4753970fc3c";
    const orderFulfilled = parseAbiItem(
      "event OrderFulfilled(bytes32 orderHash, address indexed offerer, address indexed zone, address recipient, (uint8 itemType, address token, uint256 identifier, uint256 amount)[] offer, (uint8 itemType, address token, uint256 identifier, uint256 amount, address recipient)[] consideration)",
    );
    const fulfilled = logs.find(
      (l) => l.transactionHash === tx && l.topics[0] === toEventSelector(orderFulfilled),
    );
    assert.ok(fulfilled, "OrderFulfilled is in the transaction");
    const { args } = decodeEventLog({
      abi: [orderFulfilled],
      topics: topicsOf(fulfilled),
      data: fulfilled.data,
    });
    const offered = args.offer.filter((item) => item.itemType === 2);
    assert.equal(offered.length, 1);
    const sale = decoded.nft.filter((t) => t.txHash === tx);
    assert.deepEqual(
      sale.map((t) => [t.contract, t.tokenId, t.from, t.to]),
      offered.map((item) => [lower(item.token), item.identifier, lower(args.offerer), lower(args.recipient)]),
    );
    assert.deepEqual(
      [sale[0]?.contract, sale[0]?.tokenId],
      ["0x4e3f914246f55fc4f55ee2882bf70c72a8f427cf", 733n],
    );
  });

  test("before classification the ERC-20-shaped Transfers wait, and every emitter is one to classify", () => {
    const unknown = decodeLogs(logs, () => undefined);
    assert.deepEqual(unknown.nft, expectedNft);
    assert.deepEqual(unknown.fungible, []);
    assert.deepEqual(unknown.unclassified, logs.filter(isErc20Transfer));
    const emitters = new Set(
      logs.filter((l) => l.topics[0] === TRANSFER || isErc1155(l)).map((l) => l.address),
    );
    assert.deepEqual(new Set(emittedShapes(logs).keys()), emitters);
  });
});
