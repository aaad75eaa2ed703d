/**
 * Ownership from before the start block, by transfer logs alone (`--ownership-history logs`).
 *
 * Indexed from a start block, a collection deployed before it shows only what moved since: a holder
 * that got its tokens earlier and sent them since has negative units, and one that kept them is
 * missing. For every such collection (its deployment was not observed), this reads the transfer
 * logs of blocks [0, start block) with address-filtered `eth_getLogs` — no headers, transactions,
 * receipts or traces — sums them per (token, holder), and, once a collection's history is read to
 * the start block, adds it to the collection's ownership in one transaction. Sales, prices and every
 * time series still begin at the start block.
 *
 * It runs between the indexer's rounds, on the indexer's own connection (holding the chain's lock):
 * each chunk of blocks read is one transaction with the collections' new reading position, so a
 * crash loses at most the chunk being read, and a restart reads on from there, never twice.
 */

import type { ChainClient } from "../chain/rpc-types.ts";
import { isBurnAddress } from "../core/burn.ts";
import type { Address } from "../core/hex.ts";
import type { Logger } from "../core/logger.ts";
import type { ChainLog, ContractType, NftTransfer } from "../core/types.ts";
import type { Sql } from "../store/pg/database.ts";
import type { WriteSession } from "../store/pg/session.ts";
import {
  applyHistory,
  type HistoryChunk,
  nextHistoryGroup,
  readHistories,
  registerHistories,
  storeHistoryChunk,
} from "../store/tables/ownership-history.ts";
import { decodeLogs } from "./decode/decode-logs.ts";
import { TRANSFER_TOPICS } from "./decode/topics.ts";

/** Collections whose logs one request asks for (nodes accept address lists far longer). */
export const HISTORY_GROUP_SIZE = 100;

/**
 * What a chunk of a group's logs adds up to: net units per (contract, token, holder), and per
 * collection the mints, burns, transfers and the logs that could not be read. Pure.
 */
export function sumHistoryChunk(
  contracts: readonly Address[],
  to: number,
  transfers: readonly NftTransfer[],
  unreadable: readonly ChainLog[],
): HistoryChunk {
  const balances = new Map<string, { contract: Address; tokenId: bigint; holder: Address; delta: bigint }>();
  const totals = new Map<
    Address,
    { contract: Address; minted: bigint; burned: bigint; transfers: number; skipped: number }
  >();
  const totalOf = (contract: Address) => {
    let total = totals.get(contract);
    if (!total) {
      total = { contract, minted: 0n, burned: 0n, transfers: 0, skipped: 0 };
      totals.set(contract, total);
    }
    return total;
  };
  const add = (contract: Address, tokenId: bigint, holder: Address, delta: bigint) => {
    const key = `${contract}${holder}${tokenId}`;
    const entry = balances.get(key);
    if (entry) entry.delta += delta;
    else balances.set(key, { contract, tokenId, holder, delta });
  };
  for (const t of transfers) {
    const total = totalOf(t.contract);
    total.transfers++;
    if (isBurnAddress(t.from)) total.minted += t.amount;
    else add(t.contract, t.tokenId, t.from, -t.amount);
    if (isBurnAddress(t.to)) total.burned += t.amount;
    else add(t.contract, t.tokenId, t.to, t.amount);
  }
  for (const log of unreadable) totalOf(log.address).skipped++;
  return {
    contracts,
    to,
    balances: [...balances.values()].filter((b) => b.delta !== 0n),
    totals: [...totals.values()],
  };
}

export interface OwnershipHistoryOptions {
  sql: Sql;
  client: ChainClient;
  chainId: number;
  chainName: string;
  /** The chain's start block: the history read is that of the blocks before it. */
  startBlock: number;
  /** Blocks read per chunk (one transaction); the client splits them into its own log ranges. */
  chunkBlocks: number;
  logger: Logger;
}

export interface OwnershipHistory {
  /**
   * Reads chunks until every known history is read or `deadline` (ms since the epoch) passes, then
   * applies the histories read to the end. Returns how many were applied: the ownership the
   * indexer carries must then be read again from the store.
   */
  work(session: WriteSession, next: number, signal: AbortSignal, deadline: number): Promise<number>;
  /** Whether a history was left unread by the last `work`. */
  readonly pending: boolean;
}

export function createOwnershipHistory(options: OwnershipHistoryOptions): OwnershipHistory {
  const { sql, client, chainId, chainName, startBlock, chunkBlocks, logger } = options;
  let pending = startBlock > 0;
  // Contracts discovered before this block have been given their history (from 0 after a start).
  let registeredTo = 0;
  return {
    get pending() {
      return pending;
    },
    async work(session, next, signal, deadline) {
      if (startBlock === 0) return 0;
      await registerHistories(sql, chainId, startBlock, registeredTo);
      registeredTo = next;
      for (;;) {
        if (signal.aborted || Date.now() >= deadline) break;
        const group = await nextHistoryGroup(sql, chainId, HISTORY_GROUP_SIZE);
        if (!group) break;
        const to = Math.min(group.end - 1, group.from + chunkBlocks - 1);
        const logs = await client.getLogs(group.from, to, TRANSFER_TOPICS, group.contracts);
        const types = new Map(
          [...group.types].map(([contract, names]) => [contract, new Set(names as ContractType[])]),
        );
        const decoded = decodeLogs(logs, (address) => types.get(address));
        const unreadable = [...decoded.malformed, ...decoded.unclassified];
        const chunk = sumHistoryChunk(group.contracts, to, decoded.nft, unreadable);
        await session.transaction((tx) => storeHistoryChunk(tx, chainId, chunk));
        if (unreadable.length > 0) {
          logger.warn(
            { chain: chainName, from: group.from, to, logs: unreadable.length },
            `${unreadable.length} transfer logs before the start block could not be read (blocks ${group.from}..${to}); counted in ownership_histories.skipped`,
          );
        }
        logger.debug(
          {
            chain: chainName,
            from: group.from,
            to,
            collections: group.contracts.length,
            transfers: decoded.nft.length,
          },
          "ownership history read",
        );
      }
      const read = await readHistories(sql, chainId);
      for (const contract of read) {
        await session.transaction((tx) => applyHistory(tx, chainId, contract, next));
        logger.info(
          { chain: chainName, contract, startBlock },
          `ownership of ${contract} before block ${startBlock} added from its transfer logs`,
        );
      }
      pending = (await nextHistoryGroup(sql, chainId, 1)) !== undefined;
      return read.length;
    },
  };
}
