import type { ChainClient } from "../chain/rpc-types.ts";
import { TransientError } from "../core/errors.ts";
import type { Address } from "../core/hex.ts";
import type { BlockHeader, ChainLog, ContractCreation } from "../core/types.ts";
import type { FetchedBatch, FirstSeen } from "./batch.ts";
import { decodeLogs, unclassifiedTransferEmitters } from "./decode/decode-logs.ts";
import { emittedShapes } from "./decode/shapes.ts";
import { TRANSFER_TOPICS } from "./decode/topics.ts";
import type { ContractRegistry } from "./registry.ts";

/** How deployments are observed, once the node's abilities are known. */
export type CreationSource = "traces" | "receipts" | "events";

export interface FetchContext {
  client: ChainClient;
  registry: ContractRegistry;
  creations: CreationSource;
}

/** Reads, validates and decodes blocks [from, to]. Pure reading: nothing is written. */
export async function fetchBatch(ctx: FetchContext, from: number, to: number): Promise<FetchedBatch> {
  const { client, registry } = ctx;
  const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const [logs, headers, creations] = await Promise.all([
    client.getLogs(from, to, TRANSFER_TOPICS),
    client.getHeaders(numbers),
    readCreations(ctx, from, to),
  ]);
  checkConsistency(from, headers, logs);

  const emitters = unclassifiedTransferEmitters(logs, registry.typesOf);
  await registry.ensure([...emitters, ...creations.map((c) => c.address)], emittedShapes(logs));
  const decoded = decodeLogs(logs, registry.typesOf);

  const referenced = new Set<Address>(creations.map((c) => c.address));
  for (const t of decoded.nft) referenced.add(t.contract);
  const firstSeen = await firstSeenOf(client, registry, referenced, creations, logs);

  return {
    from,
    to,
    headers,
    nft: decoded.nft,
    fungible: decoded.fungible,
    creations,
    creationSource: ctx.creations === "receipts" ? "receipt" : "trace",
    referenced: [...referenced],
    firstSeen,
    logCount: logs.length,
    malformed: decoded.malformed.length,
  };
}

function readCreations(ctx: FetchContext, from: number, to: number): Promise<ContractCreation[]> {
  switch (ctx.creations) {
    case "traces":
      return ctx.client.getTracedCreations(from, to);
    case "receipts":
      return ctx.client.getReceiptCreations(from, to);
    case "events":
      return Promise.resolve([]);
  }
}

/**
 * The headers must form one chain and every log must belong to it. A node that is switching
 * forks while answering fails this; the batch is read again.
 */
function checkConsistency(from: number, headers: readonly BlockHeader[], logs: readonly ChainLog[]): void {
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
}

/** Where each involved contract not yet stored first appears in the batch, with the transaction's sender. */
async function firstSeenOf(
  client: ChainClient,
  registry: ContractRegistry,
  referenced: ReadonlySet<Address>,
  creations: readonly ContractCreation[],
  logs: readonly ChainLog[],
): Promise<Map<Address, FirstSeen>> {
  const created = new Set(creations.map((c) => c.address));
  const earliest = new Map<Address, ChainLog>();
  for (const log of logs) {
    if (!referenced.has(log.address) || created.has(log.address) || registry.isStored(log.address)) continue;
    if (!earliest.has(log.address)) earliest.set(log.address, log);
  }
  const entries = await Promise.all(
    [...earliest].map(async ([address, log]): Promise<[Address, FirstSeen]> => {
      const minter = await client.getTransactionSender(log.transactionHash);
      return [address, { txHash: log.transactionHash, blockNumber: log.blockNumber, minter }];
    }),
  );
  return new Map(entries);
}
