import type { Address, Hex } from "../../core/hex.ts";
import type { ChainLog, MetadataUpdate } from "../../core/types.ts";
import { dataLengthOf, uintWord } from "./words.ts";

/** EIP-4906 `MetadataUpdate(uint256)`: one token's metadata changed. */
export const METADATA_UPDATE_TOPIC: Hex =
  "0xf8e1a15aba9398e019f0b49df1a4fde98ee17ae345cb5f6b5e2c27f5033e8ce7";

/** EIP-4906 `BatchMetadataUpdate(uint256,uint256)`: the metadata of a range of tokens changed. */
export const BATCH_METADATA_UPDATE_TOPIC: Hex =
  "0x6bd5c950a8d8df17f772f5af37cb3655737899cbf903264b9795592da439661c";

export const METADATA_UPDATE_TOPICS: readonly Hex[] = [METADATA_UPDATE_TOPIC, BATCH_METADATA_UPDATE_TOPIC];

/**
 * The token ids an EIP-4906 event names. The standard leaves them unindexed, in `data`; some
 * contracts index them instead, so ids are read from the topics when `data` does not hold them.
 * Anything else (a log of the wrong shape, a range backwards) names nothing.
 */
export function decodeMetadataUpdate(
  log: Pick<ChainLog, "address" | "topics" | "data">,
): MetadataUpdate | undefined {
  const words =
    log.topics[0] === METADATA_UPDATE_TOPIC ? 1 : log.topics[0] === BATCH_METADATA_UPDATE_TOPIC ? 2 : 0;
  if (words === 0) return undefined;
  let ids: bigint[];
  if (log.topics.length === 1 && log.data.length === dataLengthOf(words)) {
    ids = Array.from({ length: words }, (_, i) => uintWord(log.data, i));
  } else if (log.topics.length === 1 + words && log.data.length === 2) {
    ids = log.topics.slice(1).map((t) => BigInt(t));
  } else {
    return undefined;
  }
  const from = ids[0];
  const to = ids[words - 1];
  if (from === undefined || to === undefined || to < from) return undefined;
  return { contract: log.address, fromTokenId: from, toTokenId: to };
}

/**
 * A batch's updates as few ranges as name the same tokens: each contract's ranges sorted and
 * overlapping or adjacent ones merged, so a contract announcing the same change in every block
 * of a batch costs one range.
 */
export function mergeMetadataUpdates(updates: readonly MetadataUpdate[]): MetadataUpdate[] {
  const byContract = new Map<Address, MetadataUpdate[]>();
  for (const u of updates) {
    const list = byContract.get(u.contract);
    if (list) list.push(u);
    else byContract.set(u.contract, [u]);
  }
  const merged: MetadataUpdate[] = [];
  for (const [contract, list] of byContract) {
    list.sort((a, b) => (a.fromTokenId < b.fromTokenId ? -1 : a.fromTokenId > b.fromTokenId ? 1 : 0));
    let current: MetadataUpdate | undefined;
    for (const u of list) {
      if (current && u.fromTokenId <= current.toTokenId + 1n) {
        if (u.toTokenId > current.toTokenId) current.toTokenId = u.toTokenId;
        continue;
      }
      current = { contract, fromTokenId: u.fromTokenId, toTokenId: u.toTokenId };
      merged.push(current);
    }
  }
  return merged;
}
