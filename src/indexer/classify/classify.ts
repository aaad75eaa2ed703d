import { CONTRACT_TYPES, type ContractType } from "../../core/types.ts";
import type { EmittedShapes } from "../decode/shapes.ts";
import {
  CONSECUTIVE_TRANSFER_TOPIC,
  PUNK_BOUGHT_TOPIC,
  PUNK_TRANSFER_TOPIC,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
} from "../decode/topics.ts";
import { SELECTORS } from "./selectors.ts";

/** A contract's ERC-165 answers. `erc721` and `erc1155` count only when `erc165` holds. */
export interface InterfaceSupport {
  /** Answers true for 0x01ffc9a7 and false for 0xffffffff, as EIP-165 requires. */
  erc165: boolean;
  /** 0x80ac58cd, the final ERC-721. */
  erc721: boolean;
  /** 0xd9b67a26. */
  erc1155: boolean;
  /** 0x9a20483d, the ERC-721 draft id CryptoKitties answers. */
  erc721Legacy?: boolean;
}

export interface ClassifyEvidence {
  /** The functions the byte-code dispatches on (empty for a proxy or an account without code). */
  selectors: ReadonlySet<string>;
  /** The 32-byte constants the byte-code pushes, event topics among them. */
  eventTopics: ReadonlySet<string>;
  /** Undefined when the contract could not be asked (no code). */
  supports?: InterfaceSupport | undefined;
  /** The transfer event shapes the contract was seen emitting. */
  emitted: EmittedShapes;
}

/**
 * The contract's types, in CONTRACT_TYPES order; empty when it is no token. Several kinds of
 * evidence count, because each can be missing: a proxy has no selectors of its own, old contracts
 * predate ERC-165, an account whose code is gone is known only by its logs.
 *
 * TYPE_CRYPTOPUNKS: the punk functions (punkIndexToAddress with transferPunk or buyPunk), or
 *   PunkTransfer/PunkBought emitted or pushed. `Assign` alone is not enough: its signature is
 *   generic. A punks contract is neither ERC-20 nor legacy: its ERC-20-shaped Transfer is only
 *   the shadow of a punk move.
 * TYPE_ERC1155: ERC-165 0xd9b67a26, TransferSingle/TransferBatch emitted or pushed, or the
 *   1155 safeTransferFrom with safeBatchTransferFrom or balanceOfBatch.
 * TYPE_ERC721: ERC-165 0x80ac58cd; ownerOf with a safeTransferFrom and setApprovalForAll or
 *   getApproved; ERC-2309 ConsecutiveTransfer emitted or pushed; or a Transfer with the token id
 *   indexed emitted by a contract whose functions are not an ERC-20's.
 * TYPE_ERC721_LEGACY: an NFT whose Transfer carries the token id in its data, so that the
 *   ERC-20-shaped Transfer must be read as an NFT move. That is an NFT not speaking the final
 *   ERC-721 (ownerOf, the draft's interface id, transfer with takeOwnership or tokensOfOwner, or
 *   an unindexed Transfer emitted by something that is not an ERC-20), or an ERC-721 seen emitting
 *   such Transfers. Never when the contract has the six ERC-20 functions: a hybrid's
 *   ERC-20-shaped Transfer is its fungible side. CryptoKitties is legacy by ownerOf and lacks
 *   allowance(), so it is not an ERC-20 even though it has transfer/transferFrom/approve.
 * TYPE_ERC20: the six ERC-20 functions (whatever else the contract has: ERC-20/ERC-721 hybrids
 *   exist), or an ERC-20-shaped Transfer emitted by a contract not read as legacy or punks, or
 *   a contract that moves amounts (transfer and balanceOf without ownerOf) emitting Transfer in
 *   another layout (tokens that index the value, or index nothing).
 */
export function classifyContract(evidence: ClassifyEvidence): ContractType[] {
  const { selectors, eventTopics, emitted } = evidence;
  const has = (selector: string) => selectors.has(selector);
  const claims = evidence.supports?.erc165 === true ? evidence.supports : undefined;

  const erc20Functions =
    has(SELECTORS.totalSupply) &&
    has(SELECTORS.balanceOf) &&
    has(SELECTORS.transfer) &&
    has(SELECTORS.transferFrom) &&
    has(SELECTORS.approve) &&
    has(SELECTORS.allowance);
  const movesAmounts = has(SELECTORS.transfer) && has(SELECTORS.balanceOf) && !has(SELECTORS.ownerOf);

  const punks =
    (has(SELECTORS.punkIndexToAddress) && (has(SELECTORS.transferPunk) || has(SELECTORS.buyPunk))) ||
    emitted.has("punk-transfer") ||
    eventTopics.has(PUNK_TRANSFER_TOPIC) ||
    eventTopics.has(PUNK_BOUGHT_TOPIC);

  const erc1155 =
    claims?.erc1155 === true ||
    emitted.has("erc1155-transfer") ||
    eventTopics.has(TRANSFER_SINGLE_TOPIC) ||
    eventTopics.has(TRANSFER_BATCH_TOPIC) ||
    (has(SELECTORS.safeTransferFrom1155) &&
      (has(SELECTORS.safeBatchTransferFrom) || has(SELECTORS.balanceOfBatch)));

  const erc721 =
    claims?.erc721 === true ||
    (has(SELECTORS.ownerOf) &&
      (has(SELECTORS.safeTransferFrom) || has(SELECTORS.safeTransferFromWithData)) &&
      (has(SELECTORS.setApprovalForAll) || has(SELECTORS.getApproved))) ||
    emitted.has("consecutive-transfer") ||
    eventTopics.has(CONSECUTIVE_TRANSFER_TOPIC) ||
    (emitted.has("erc721-transfer") && !movesAmounts);

  const looksNft =
    has(SELECTORS.ownerOf) ||
    claims?.erc721Legacy === true ||
    (has(SELECTORS.transfer) && (has(SELECTORS.takeOwnership) || has(SELECTORS.tokensOfOwner))) ||
    (emitted.has("unindexed-transfer") && !movesAmounts);
  const idInData = emitted.has("erc20-transfer") || emitted.has("unindexed-transfer");
  const legacy = !punks && !erc20Functions && ((looksNft && !erc721) || (erc721 && idInData));

  const erc20 =
    !punks &&
    !legacy &&
    (erc20Functions ||
      emitted.has("erc20-transfer") ||
      (movesAmounts && (emitted.has("unindexed-transfer") || emitted.has("erc721-transfer"))));

  const found: Record<ContractType, boolean> = {
    TYPE_ERC20: erc20,
    TYPE_ERC721: erc721,
    TYPE_ERC1155: erc1155,
    TYPE_ERC721_LEGACY: legacy,
    TYPE_CRYPTOPUNKS: punks,
  };
  return CONTRACT_TYPES.filter((type) => found[type]);
}
