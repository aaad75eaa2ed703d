import { wordToAddress } from "../../core/hex.ts";
import type { ChainLog, ContractType } from "../../core/types.ts";
import type { PunkDecoder } from "./punks.ts";
import { isFungibleOnly, readValueTransfer } from "./readings.ts";
import { type DecodeSink, fungibleTransfer, nftTransfer } from "./records.ts";
import { addressWord, dataLengthOf, uintWord } from "./words.ts";

/*
 * `Transfer(address,address,uint256)` is logged in three layouts, told apart by the topic count:
 *   4 topics, no data     ERC-721: from, to and token id indexed
 *   3 topics, one word    ERC-20 amount, or the token id of a pre-standard NFT, or CryptoPunks'
 *                         shadow of a punk move; only the emitter's types can tell
 *   1 topic, three words  nothing indexed: CryptoKitties and other NFTs written against the draft
 * The data length must be exactly the layout's: a log that does not match was not produced by
 * this event as declared, and its values cannot be trusted.
 */

const ONE_WORD = dataLengthOf(1);
const THREE_WORDS = dataLengthOf(3);

export function decodeTransfer(
  log: ChainLog,
  types: ReadonlySet<ContractType> | undefined,
  punks: PunkDecoder,
  sink: DecodeSink,
): void {
  const { topics, data } = log;
  switch (topics.length) {
    case 4: {
      const [, from, to, id] = topics;
      if (from === undefined || to === undefined || id === undefined || data.length !== 2) break;
      if (isFungibleOnly(types)) {
        sink.fungible.push(fungibleTransfer(log, wordToAddress(from), wordToAddress(to), BigInt(id)));
      } else {
        sink.nft.push(nftTransfer(log, "erc721", BigInt(id), wordToAddress(from), wordToAddress(to), 1n, 0));
      }
      return;
    }
    case 3: {
      const [, from, to] = topics;
      if (from === undefined || to === undefined || data.length !== ONE_WORD) break;
      switch (readValueTransfer(types)) {
        case "punks":
          if (punks.shadow(log)) return;
          break;
        case "legacy":
          sink.nft.push(
            nftTransfer(log, "legacy", uintWord(data, 0), wordToAddress(from), wordToAddress(to), 1n, 0),
          );
          return;
        case "fungible":
          sink.fungible.push(
            fungibleTransfer(log, wordToAddress(from), wordToAddress(to), uintWord(data, 0)),
          );
          return;
        case "unknown":
          sink.unclassified.push(log);
          return;
      }
      break;
    }
    case 1: {
      if (data.length !== THREE_WORDS) break;
      const from = addressWord(data, 0);
      const to = addressWord(data, 1);
      if (isFungibleOnly(types)) {
        sink.fungible.push(fungibleTransfer(log, from, to, uintWord(data, 2)));
      } else {
        sink.nft.push(nftTransfer(log, "legacy", uintWord(data, 2), from, to, 1n, 0));
      }
      return;
    }
  }
  sink.malformed.push(log);
}
