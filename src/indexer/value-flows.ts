import { type Address, type Hex, wordToAddress } from "../core/hex.ts";
import type { BlockHeader, ChainLog, NativeTransfer, ValueFlow } from "../core/types.ts";
import { TRANSFER_TOPIC, TRANSFER_TOPICS } from "./decode/topics.ts";
import { dataLengthOf, uintWord } from "./decode/words.ts";

const TRANSFER_TOPIC_SET = new Set<Hex>(TRANSFER_TOPICS);
const IN_TRADE = { inTrade: true } as const;

/**
 * The value flows of blocks [from, to]: native coin from the call traces (absent without them) and
 * the native-pegged tokens' `Transfer` logs, in chain order, with their block's time. Those of a
 * transaction that moved an NFT are marked `inTrade`: they are never funding. A transaction moved
 * an NFT when one of its logs has the shape of an NFT movement (any transfer event but an ERC-20
 * `Transfer` of three topics), read from the logs alone so that a batch and the read-back after a
 * restart tell the same transactions apart.
 *
 * A pegged token's transfer, decoded by hand (an ERC-721 `Transfer` has a fourth topic):
 *   topics  [ Transfer topic0 | 12 zero bytes + from | 12 zero bytes + to ]
 *   data    [ value: uint256, one 32-byte word ]
 */
export function valueFlows(
  read: { headers: readonly BlockHeader[]; logs: readonly ChainLog[]; native?: readonly NativeTransfer[] },
  from: number,
  to: number,
  pegged: ReadonlySet<Address>,
): ValueFlow[] {
  const nftTransactions = new Set<Hex>();
  for (const log of read.logs) {
    const topic0 = log.topics[0] as Hex;
    if (!TRANSFER_TOPIC_SET.has(topic0)) continue;
    if (topic0 === TRANSFER_TOPIC && log.topics.length === 3) continue;
    nftTransactions.add(log.transactionHash);
  }
  const timeOf = (block: number) => (read.headers[block - from] as BlockHeader).timestamp;
  const flows: ValueFlow[] = [];
  for (const n of read.native ?? []) {
    if (n.blockNumber > to) continue;
    flows.push({
      from: n.from,
      to: n.to,
      token: null,
      value: n.value,
      blockNumber: n.blockNumber,
      txIndex: n.txIndex,
      time: timeOf(n.blockNumber),
      ...(nftTransactions.has(n.txHash) ? IN_TRADE : {}),
    });
  }
  if (pegged.size > 0) {
    for (const log of read.logs) {
      if (
        log.topics[0] !== TRANSFER_TOPIC ||
        log.topics.length !== 3 ||
        log.data.length !== dataLengthOf(1) ||
        log.blockNumber > to ||
        !pegged.has(log.address)
      ) {
        continue;
      }
      const value = uintWord(log.data, 0);
      if (value === 0n) continue;
      flows.push({
        from: wordToAddress(log.topics[1] as Hex),
        to: wordToAddress(log.topics[2] as Hex),
        token: log.address,
        value,
        blockNumber: log.blockNumber,
        txIndex: log.transactionIndex,
        time: timeOf(log.blockNumber),
        ...(nftTransactions.has(log.transactionHash) ? IN_TRADE : {}),
      });
    }
  }
  // Stable: within a transaction, native movements before token transfers (the rule reads whole transactions).
  return flows.sort((a, b) => a.blockNumber - b.blockNumber || a.txIndex - b.txIndex);
}
