import { bloomBits, bloomMayHold } from "../chain/bloom.ts";
import type { ChainClient } from "../chain/rpc-types.ts";
import { TransientError } from "../core/errors.ts";
import type { Address, Hex } from "../core/hex.ts";
import type {
  BlockHeader,
  BlockTraces,
  ChainLog,
  ContractCreation,
  NativeTransfer,
  NftTransfer,
  TransactionCall,
} from "../core/types.ts";
import { decodePoolLogs, POOL_TOPICS } from "../rates/events.ts";
import type { PoolDescription } from "../rates/pools.ts";
import { decodeMarketEvent, decodePunkBid, MARKET_TOPICS, PUNK_BID_TOPICS } from "../sales/markets.ts";
import type { SkippedLog } from "../store/tables/skipped-logs.ts";
import type { FetchedBatch, FirstSeen } from "./batch.ts";
import { type DecodedLogs, decodeLogs } from "./decode/decode-logs.ts";
import { decodeMetadataUpdate, METADATA_UPDATE_TOPICS } from "./decode/metadata-updates.ts";
import { decodePunkOffer, PUNK_OFFER_TOPICS } from "./decode/punk-offers.ts";
import { emittedShapes } from "./decode/shapes.ts";
import { TRANSFER_TOPICS } from "./decode/topics.ts";
import type { ContractRegistry } from "./registry.ts";
import { valueFlows } from "./value-flows.ts";

const NO_TOKENS: ReadonlySet<Address> = new Set();

/** How deployments are observed, once the node's abilities are known. */
export type CreationSource = "traces" | "receipts" | "events";

export interface FetchContext {
  client: ChainClient;
  registry: ContractRegistry;
  creations: CreationSource;
  /** The liquidity pools whose prices the exchange rates follow. */
  pools: readonly PoolDescription[];
  /** The native-pegged tokens whose transfers count as value flows (none when absent). */
  nativePegged?: ReadonlySet<Address>;
}

/**
 * Most rows (NFT transfers and contract creations) one batch may carry when it spans several
 * blocks, so that its memory is bounded whatever the chain holds: one ERC-2309 event expands into
 * up to a budget of rows, and a traced stretch of gas-token deployments makes hundreds per block
 * without a log for the batch sizer to see coming. Past this, the batch ends before the block
 * that crosses it; a single block is bounded by its gas and the decoder's budgets.
 */
export const MAX_BATCH_ROWS = 100_000;

/** How the registry sees a batch's contracts: who to inspect eagerly, near the head. */
export interface FetchOptions {
  /**
   * Inspect the batch's deployments even when they emit nothing. Near the head a handful per
   * block, so a new collection is listed at once; in a backfill, millions that mostly never
   * emit a transfer, so they wait until they first do.
   */
  inspectDeployments: boolean;
  /** Rows past which a multi-block batch is cut (MAX_BATCH_ROWS unless a test asks for fewer). */
  maxRows?: number;
}

/** Reads, validates and decodes blocks [from, to]. Pure reading: nothing is written. */
export async function fetchBatch(
  ctx: FetchContext,
  from: number,
  to: number,
  options: FetchOptions = { inspectDeployments: false },
): Promise<FetchedBatch> {
  const { client, registry } = ctx;
  const [read, poolLogs] = await Promise.all([
    readBlocks(client, ctx.creations, from, to, LOG_TOPICS),
    ctx.pools.length === 0
      ? Promise.resolve([])
      : client.getLogs(
          from,
          to,
          POOL_TOPICS,
          ctx.pools.map((p) => p.address),
        ),
  ]);
  for (const log of poolLogs) {
    if (read.headers[log.blockNumber - from]?.hash !== log.blockHash) {
      throw new TransientError(
        `pool log ${log.logIndex} of block ${log.blockNumber} is not from the block the node returned`,
      );
    }
  }
  let { headers, creations } = read;
  // Transfers and the events that say who traded what at which price come in one answer.
  let logs = read.logs.filter((log) => TRANSFER_TOPIC_SET.has(log.topics[0] as Hex));
  let tradeLogs = read.logs.filter((log) => TRADE_TOPIC_SET.has(log.topics[0] as Hex));
  let updateLogs = read.logs.filter((log) => UPDATE_TOPIC_SET.has(log.topics[0] as Hex));

  const classified = await registry.ensure(
    emittedShapes(logs),
    options.inspectDeployments ? creations.map((c) => c.address) : [],
  );
  let decoded = decodeLogs(logs, classified.typesOf);
  let end = to;
  const crossing = crossingBlock(decoded.nft, creations, options.maxRows ?? MAX_BATCH_ROWS);
  if (crossing !== undefined && to > from) {
    end = Math.max(from, crossing - 1);
    logs = logs.filter((log) => log.blockNumber <= end);
    tradeLogs = tradeLogs.filter((log) => log.blockNumber <= end);
    updateLogs = updateLogs.filter((log) => log.blockNumber <= end);
    headers = headers.slice(0, end - from + 1);
    creations = creations.filter((c) => c.blockNumber <= end);
    decoded = decodeLogs(logs, classified.typesOf);
  }

  // The contracts this batch commits: those it involves whose inspection is not stored yet.
  const involved = new Set<Address>(creations.map((c) => c.address));
  for (const log of logs) involved.add(log.address);
  const contracts = classified.pending.filter((a) => involved.has(a));
  const createdHere = new Set<Address>(creations.map((c) => c.address));
  const needFirstSeen = contracts.filter((a) => !createdHere.has(a) && !classified.created.has(a));
  const [firstSeen, calls] = await Promise.all([
    firstSeenOf(client, new Set(needFirstSeen), logs),
    callsOf(client, decoded.nft, read.calls, (block) => (headers[block - from] as BlockHeader).hash),
  ]);
  const nftTransactions = new Set(calls.keys());

  return {
    from,
    to: end,
    requestedTo: to,
    headers,
    nft: decoded.nft,
    fungible: decoded.fungible,
    creations,
    creationSource: ctx.creations === "receipts" ? "receipt" : "trace",
    contracts,
    firstSeen,
    logCount: logs.length,
    skipped: skippedLogs(decoded),
    calls,
    ...(read.native ? { native: read.native.filter((n) => nftTransactions.has(n.txHash)) } : {}),
    ...tradeEvents(tradeLogs, nftTransactions),
    metadataUpdates: updateLogs.map(decodeMetadataUpdate).filter((u) => u !== undefined),
    flows: valueFlows(
      { headers, logs: read.logs, native: read.native },
      from,
      end,
      ctx.nativePegged ?? NO_TOKENS,
    ),
    poolStates: decodePoolLogs(
      poolLogs.filter((log) => log.blockNumber <= end),
      ctx.pools,
    ).states,
  };
}

/** The topics asked of eth_getLogs: transfers, marketplace events, CryptoPunks bids and offers, metadata updates. */
export const LOG_TOPICS: readonly Hex[] = [
  ...new Set([
    ...TRANSFER_TOPICS,
    ...MARKET_TOPICS,
    ...PUNK_BID_TOPICS,
    ...PUNK_OFFER_TOPICS,
    ...METADATA_UPDATE_TOPICS,
  ]),
];
const TRANSFER_TOPIC_SET = new Set<Hex>(TRANSFER_TOPICS);
const TRADE_TOPIC_SET = new Set<Hex>([...MARKET_TOPICS, ...PUNK_BID_TOPICS, ...PUNK_OFFER_TOPICS]);
const UPDATE_TOPIC_SET = new Set<Hex>(METADATA_UPDATE_TOPICS);

/** Marketplace events of the transactions that moved NFTs, and every CryptoPunks bid and offer event. */
function tradeEvents(
  logs: readonly ChainLog[],
  nftTransactions: ReadonlySet<Hex>,
): Pick<FetchedBatch, "markets" | "punkBids" | "punkOffers"> {
  const markets: FetchedBatch["markets"] = [];
  const punkBids: FetchedBatch["punkBids"] = [];
  const punkOffers: FetchedBatch["punkOffers"] = [];
  for (const log of logs) {
    const offer = decodePunkOffer(log);
    if (offer) {
      punkOffers.push(offer);
      continue;
    }
    const bid = decodePunkBid(log);
    if (bid) {
      punkBids.push(bid);
      continue;
    }
    if (!nftTransactions.has(log.transactionHash)) continue;
    const event = decodeMarketEvent(log);
    if (event) markets.push({ ...event, txHash: log.transactionHash });
  }
  return { markets, punkBids, punkOffers };
}

/**
 * The sender, recipient and value of every transaction that moved an NFT: from its top-level call
 * when the blocks were traced, else asked of the node by block hash and index.
 */
async function callsOf(
  client: ChainClient,
  nft: readonly NftTransfer[],
  traced: readonly TransactionCall[] | undefined,
  blockHashOf: (blockNumber: number) => Hex,
): Promise<Map<Hex, TransactionCall>> {
  const wanted = new Map<Hex, NftTransfer>();
  for (const t of nft) if (!wanted.has(t.txHash)) wanted.set(t.txHash, t);
  const calls = new Map<Hex, TransactionCall>();
  if (traced) {
    for (const call of traced) if (wanted.has(call.txHash)) calls.set(call.txHash, call);
    for (const txHash of wanted.keys()) {
      if (!calls.has(txHash)) throw new TransientError(`the traces hold no call for transaction ${txHash}`);
    }
    return calls;
  }
  const read = await Promise.all(
    [...wanted.values()].map((t) =>
      client.getTransaction({ blockHash: blockHashOf(t.blockNumber), index: t.txIndex, hash: t.txHash }),
    ),
  );
  for (const call of read) calls.set(call.txHash, call);
  return calls;
}

/** The block at which the batch's rows pass `maxRows`, if they do. */
function crossingBlock(
  nft: readonly NftTransfer[],
  creations: readonly ContractCreation[],
  maxRows: number,
): number | undefined {
  if (nft.length + creations.length <= maxRows) return undefined;
  const perBlock = new Map<number, number>();
  for (const t of nft) perBlock.set(t.blockNumber, (perBlock.get(t.blockNumber) ?? 0) + 1);
  for (const c of creations) perBlock.set(c.blockNumber, (perBlock.get(c.blockNumber) ?? 0) + 1);
  let total = 0;
  for (const block of [...perBlock.keys()].sort((a, b) => a - b)) {
    total += perBlock.get(block) ?? 0;
    if (total > maxRows) return block;
  }
  return undefined;
}

/** Every log the batch read but does not index, with the reason, in chain order. */
function skippedLogs(decoded: DecodedLogs): SkippedLog[] {
  const skipped: SkippedLog[] = [];
  const add = (log: ChainLog, reason: SkippedLog["reason"], tokens?: bigint) =>
    skipped.push({
      blockNumber: log.blockNumber,
      logIndex: log.logIndex,
      contract: log.address,
      txHash: log.transactionHash,
      reason,
      tokens,
    });
  for (const log of decoded.malformed) add(log, "malformed");
  for (const log of decoded.unclassified) add(log, "unclassified");
  for (const { log, tokens } of decoded.spam) add(log, "spam", tokens);
  return skipped.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}

/** What blocks [from, to] hold, as read from the node and checked against each other. */
export interface ReadBlocks {
  headers: BlockHeader[];
  /** Logs whose first topic is one of those asked for. */
  logs: ChainLog[];
  creations: ContractCreation[];
  /** From call traces, when the node has them: every native-coin movement, and each transaction's call. */
  native?: NativeTransfer[];
  calls?: TransactionCall[];
}

/**
 * Reads the headers, logs and contract creations of blocks [from, to], checks that they are of one
 * chain, and checks the blocks the logs answer left empty against their blooms. Throws TransientError
 * when they are not of one chain (a node switching forks while answering): reading the blocks again
 * is the remedy.
 */
export async function readBlocks(
  client: ChainClient,
  source: CreationSource,
  from: number,
  to: number,
  topic0: readonly Hex[],
): Promise<ReadBlocks> {
  const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const [logs, headers, traced] = await Promise.all([
    client.getLogs(from, to, topic0),
    client.getHeaders(numbers),
    readCreations(client, source, from, to),
  ]);
  const { creations } = traced;
  checkConsistency(from, headers, logs, creations, traced.tracedBlocks);
  return {
    headers,
    logs: await withPinnedLogs(client, headers, logs, topic0),
    creations,
    ...(traced.native ? { native: traced.native, calls: traced.calls } : {}),
  };
}

/**
 * A replica behind the range asked for may answer it with no logs rather than an error. So a block the
 * answer gave no log for, but whose bloom may hold one of `topic0`, is asked again by its hash: a node
 * without that exact block errors rather than answering nothing. Blooms have false positives, so that
 * answer is final, empty or not. The pinned logs name the hash they were asked by: of the header's block.
 */
async function withPinnedLogs(
  client: ChainClient,
  headers: readonly BlockHeader[],
  logs: ChainLog[],
  topic0: readonly Hex[],
): Promise<ChainLog[]> {
  const withLogs = new Set<number>();
  for (const log of logs) withLogs.add(log.blockNumber);
  const bits = topic0.map(bloomBits);
  const suspects = headers.filter(
    (header) => !withLogs.has(header.number) && bits.some((b) => bloomMayHold(header.logsBloom, b)),
  );
  if (suspects.length === 0) return logs;
  const pinned = await Promise.all(
    suspects.map((header) => client.getBlockLogs(header.hash, header.number, topic0)),
  );
  const found = pinned.flat();
  if (found.length === 0) return logs;
  return [...logs, ...found].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}

/** Creations, and with traces the native movements and each transaction's call. */
async function readCreations(
  client: ChainClient,
  source: CreationSource,
  from: number,
  to: number,
): Promise<
  BlockTraces | { creations: ContractCreation[]; native?: undefined; calls?: undefined; tracedBlocks: [] }
> {
  switch (source) {
    case "traces":
      return client.getTraces(from, to);
    case "receipts":
      return { creations: await client.getReceiptCreations(from, to), tracedBlocks: [] };
    case "events":
      return { creations: [], tracedBlocks: [] };
  }
}

/**
 * The headers must form one chain, and every log and creation must belong to it: a trace or receipt
 * names its block's hash, so one of the same height on another fork is caught here.
 */
function checkConsistency(
  from: number,
  headers: readonly BlockHeader[],
  logs: readonly ChainLog[],
  creations: readonly ContractCreation[],
  tracedBlocks: readonly { number: number; hash: Hex }[],
): void {
  for (const traced of tracedBlocks) {
    if (headers[traced.number - from]?.hash !== traced.hash) {
      throw new TransientError(`the traces of block ${traced.number} are not of the block the node returned`);
    }
  }
  for (let i = 0; i < headers.length; i++) {
    const header = headers[i] as BlockHeader;
    if (header.number !== from + i)
      throw new TransientError(`node returned block ${header.number} for ${from + i}`);
    const previous = headers[i - 1];
    if (previous && header.parentHash !== previous.hash) {
      throw new TransientError(
        `node returned blocks ${previous.number} and ${header.number} from different forks`,
      );
    }
  }
  for (const log of logs) {
    const header = headers[log.blockNumber - from];
    if (!header || header.hash !== log.blockHash) {
      throw new TransientError(
        `log ${log.logIndex} of block ${log.blockNumber} is not from the block the node returned`,
      );
    }
  }
  for (const creation of creations) {
    const header = headers[creation.blockNumber - from];
    if (!header || header.hash !== creation.blockHash) {
      throw new TransientError(
        `the creation of ${creation.address} in block ${creation.blockNumber} is not from the block the node returned`,
      );
    }
  }
}

/** Where each of `contracts` first appears in the batch's logs, with the transaction's sender. */
async function firstSeenOf(
  client: ChainClient,
  contracts: ReadonlySet<Address>,
  logs: readonly ChainLog[],
): Promise<Map<Address, FirstSeen>> {
  if (contracts.size === 0) return new Map();
  const earliest = new Map<Address, ChainLog>();
  for (const log of logs) {
    if (contracts.has(log.address) && !earliest.has(log.address)) earliest.set(log.address, log);
  }
  const entries = await Promise.all(
    [...earliest].map(async ([address, log]): Promise<[Address, FirstSeen]> => {
      const minter = await client.getTransactionSender({
        blockHash: log.blockHash,
        index: log.transactionIndex,
        hash: log.transactionHash,
      });
      return [address, { txHash: log.transactionHash, blockNumber: log.blockNumber, minter }];
    }),
  );
  return new Map(entries);
}
