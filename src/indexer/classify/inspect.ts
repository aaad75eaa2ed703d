import type { ChainClient } from "../../chain/rpc-types.ts";
import type { Address, Hex } from "../../core/hex.ts";
import type { ContractType } from "../../core/types.ts";
import type { EmittedShapes } from "../decode/shapes.ts";
import { dispatcherSelectors, functionSelectors, pushedWords } from "./bytecode.ts";
import {
  DECIMALS_CALLDATA,
  decodeBoolResult,
  decodeStringResult,
  decodeUint8Result,
  NAME_CALLDATA,
  SUPPORTS_INTERFACE_CALLDATA,
  SYMBOL_CALLDATA,
} from "./calls.ts";
import { type ClassifyEvidence, classifyContract, type InterfaceSupport } from "./classify.ts";

export interface ContractInspection {
  types: ContractType[];
  /** Empty when the contract has no readable name. */
  name: string;
  symbol: string;
  /** The ERC-20 side's decimals; 0 for a contract that is not an ERC-20 (NFTs have no decimals). */
  decimals: number;
}

/**
 * Classifies a contract from its byte-code, its ERC-165 answers and the transfer shapes it was
 * seen emitting, and reads its name, symbol and decimals, all at `block` (latest when omitted:
 * pass the block the contract was seen at, since its code may be gone later). Every request goes
 * out at once. A reverting call counts as "no"; a node fault rejects, so that a transient error
 * never gets stored as a classification. An account without code (self-destructed, or not
 * deployed at that block) is classified by its emitted events alone.
 */
export async function inspectContract(
  client: ChainClient,
  address: Address,
  emitted: EmittedShapes,
  block?: number,
): Promise<ContractInspection> {
  const call = (data: Hex) => client.call(address, data, block);
  const probes = SUPPORTS_INTERFACE_CALLDATA;
  const [code, erc165, invalid, erc721, erc1155, erc721Draft, name, symbol, decimals] = await Promise.all([
    client.getCode(address, block),
    call(probes.erc165),
    call(probes.invalid),
    call(probes.erc721),
    call(probes.erc1155),
    call(probes.erc721Draft),
    call(NAME_CALLDATA),
    call(SYMBOL_CALLDATA),
    call(DECIMALS_CALLDATA),
  ]);

  let evidence: ClassifyEvidence;
  if (code.length <= 2) {
    evidence = { selectors: new Set(), eventTopics: new Set(), supports: undefined, emitted };
  } else {
    const dispatched = dispatcherSelectors(code);
    // No dispatcher of solc's form (another compiler): every pushed 4-byte constant stands in.
    const selectors = dispatched.size > 0 ? dispatched : functionSelectors(code);
    // EIP-165's detection: true for its own id and false for 0xffffffff, or the answers mean nothing.
    const speaks165 = decodeBoolResult(erc165) === true && decodeBoolResult(invalid) === false;
    const supports: InterfaceSupport = {
      erc165: speaks165,
      erc721: speaks165 && decodeBoolResult(erc721) === true,
      erc1155: speaks165 && decodeBoolResult(erc1155) === true,
      erc721Legacy: speaks165 && decodeBoolResult(erc721Draft) === true,
    };
    evidence = { selectors, eventTopics: pushedWords(code), supports, emitted };
  }

  const types = classifyContract(evidence);
  const hasCode = code.length > 2;
  return {
    types,
    name: (hasCode && decodeStringResult(name)) || "",
    symbol: (hasCode && decodeStringResult(symbol)) || "",
    decimals: hasCode && types.includes("TYPE_ERC20") ? (decodeUint8Result(decimals) ?? 0) : 0,
  };
}
