/**
 * Classification of recorded byte-code: CryptoKitties as deployed on mainnet (with ethereum-etl's
 * list of its function sighashes), and the contracts of contracts/src as solc compiles them.
 * Expected selectors come from ethereum-etl and from the ABIs through viem, not from the walker.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { type Abi, type AbiEvent, type AbiFunction, toEventSelector, toFunctionSelector } from "viem";
import type { Hex } from "../../src/core/hex.ts";
import type { ContractType } from "../../src/core/types.ts";
import {
  dispatcherSelectors,
  functionSelectors,
  hasEventTopic,
  pushedWords,
} from "../../src/indexer/classify/bytecode.ts";
import { type ClassifyEvidence, classifyContract } from "../../src/indexer/classify/classify.ts";
import type { EventShape } from "../../src/indexer/decode/shapes.ts";

const CK_DIR = new URL("../fixtures/realdata/ethereum-etl/erc721_contract_cryptokitties/", import.meta.url);
const ckCode = (
  JSON.parse(
    readFileSync(new URL("eth_getCode_0x06012c8cf97bead5deae237070f9587f8e7a266d.json", CK_DIR), "utf8"),
  ) as { result: Hex }
).result;
const ckExpected = JSON.parse(readFileSync(new URL("expected_contracts.json", CK_DIR), "utf8")) as {
  bytecode: Hex;
  function_sighashes: string[];
  is_erc20: boolean;
  is_erc721: boolean;
};

const TRANSFER = toEventSelector("Transfer(address,address,uint256)");

function evidenceOf(code: Hex, rest: Partial<ClassifyEvidence> = {}): ClassifyEvidence {
  return {
    selectors: dispatcherSelectors(code),
    eventTopics: pushedWords(code),
    emitted: new Set(),
    ...rest,
  };
}

describe("CryptoKitties (mainnet byte-code)", () => {
  test("the recorded eth_getCode answer is the byte-code ethereum-etl analysed", () => {
    assert.equal(ckCode, ckExpected.bytecode);
    assert.equal(ckExpected.is_erc721, true);
    assert.equal(ckExpected.is_erc20, false);
  });

  test("functionSelectors holds every sighash ethereum-etl lists", () => {
    const selectors = functionSelectors(ckCode);
    const missing = ckExpected.function_sighashes.filter((s) => !selectors.has(s));
    assert.deepEqual(missing, []);
  });

  test("dispatcherSelectors is exactly the functions: ethereum-etl's list less the 0xffffffff mask", () => {
    // ethereum-etl keeps every PUSH4 of the dispatcher block, the selector mask among them.
    const functions = ckExpected.function_sighashes.filter((s) => s !== "0xffffffff");
    assert.deepEqual(new Set(dispatcherSelectors(ckCode)), new Set(functions));
    assert.equal(functionSelectors(ckCode).has("0xffffffff"), true);
  });

  test("has the functions it is known for", () => {
    const selectors = dispatcherSelectors(ckCode);
    for (const signature of [
      "ownerOf(uint256)",
      "transfer(address,uint256)",
      "transferFrom(address,address,uint256)",
      "tokensOfOwner(address)",
      "supportsInterface(bytes4)",
    ]) {
      assert.ok(selectors.has(toFunctionSelector(signature)), signature);
    }
    assert.equal(selectors.has(toFunctionSelector("allowance(address,address)")), false);
  });

  test("pushes the Transfer topic, and no ERC-1155 or punk topics", () => {
    assert.equal(hasEventTopic(ckCode, TRANSFER), true);
    assert.equal(
      hasEventTopic(ckCode, toEventSelector("TransferSingle(address,address,address,uint256,uint256)")),
      false,
    );
    assert.equal(hasEventTopic(ckCode, toEventSelector("PunkTransfer(address,address,uint256)")), false);
  });

  test("is TYPE_ERC721_LEGACY, never TYPE_ERC20, from byte-code alone or with its real ERC-165 answers", () => {
    // CryptoKitties logs Transfer(address from, address to, uint256 tokenId): nothing indexed.
    const cases: Partial<ClassifyEvidence>[] = [
      { supports: undefined },
      { supports: undefined, emitted: new Set<EventShape>(["unindexed-transfer"]) },
      { supports: { erc165: true, erc721: false, erc1155: false } },
      { supports: { erc165: true, erc721: false, erc1155: false, erc721Legacy: true } },
      {
        supports: { erc165: true, erc721: false, erc1155: false },
        emitted: new Set<EventShape>(["unindexed-transfer"]),
      },
      { selectors: functionSelectors(ckCode), supports: undefined },
    ];
    for (const rest of cases) {
      assert.deepEqual(
        classifyContract(evidenceOf(ckCode, rest)),
        ["TYPE_ERC721_LEGACY"],
        JSON.stringify(rest.supports),
      );
    }
  });
});

interface Artifact {
  abi: Abi;
  deployedBytecode: Hex;
}

function artifact(name: string): Artifact {
  const url = new URL(`../../contracts/artifacts/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Artifact;
}

function abiSelectors(abi: Abi): Set<string> {
  return new Set(
    abi.filter((item): item is AbiFunction => item.type === "function").map((f) => toFunctionSelector(f)),
  );
}

describe("compiled contracts (solc 0.8, OpenZeppelin 5)", () => {
  const expectations: [string, ContractType[]][] = [
    ["TestERC20", ["TYPE_ERC20"]],
    ["TestERC721", ["TYPE_ERC721"]],
    ["TestERC721Consecutive", ["TYPE_ERC721"]],
    ["TestERC1155", ["TYPE_ERC1155"]],
    ["LegacyERC721", ["TYPE_ERC721_LEGACY"]],
    ["CryptoPunksMarket", ["TYPE_CRYPTOPUNKS"]],
    // Carries the creation code of an ERC-721 and an ERC-1155, but is neither.
    ["CollectionFactory", []],
    // Calls ownerOf and safeTransferFrom on collections, but is no NFT.
    ["TestMarketplace", []],
  ];

  for (const [name, types] of expectations) {
    test(`${name}: the dispatcher's selectors are its ABI's functions; classified ${types.join(", ") || "as no token"}`, () => {
      const { abi, deployedBytecode } = artifact(name);
      assert.deepEqual(
        [...abiSelectors(abi)].filter((s) => !dispatcherSelectors(deployedBytecode).has(s)),
        [],
      );
      assert.deepEqual(classifyContract(evidenceOf(deployedBytecode)), types);
    });
  }

  test("the pushed topics hold the transfer events the ABI declares", () => {
    // Declared events a contract never emits (OpenZeppelin's ERC-1155 URI) are compiled out, and
    // OpenZeppelin emits ConsecutiveTransfer only from the constructor, which is not runtime code.
    const transferEvents = new Set([
      "Transfer",
      "TransferSingle",
      "TransferBatch",
      "Assign",
      "PunkTransfer",
      "PunkBought",
    ]);
    let checked = 0;
    for (const name of [
      "TestERC721",
      "TestERC1155",
      "CryptoPunksMarket",
      "TestERC721Consecutive",
      "LegacyERC721",
    ]) {
      const { abi, deployedBytecode } = artifact(name);
      for (const event of abi.filter(
        (item): item is AbiEvent => item.type === "event" && transferEvents.has(item.name),
      )) {
        checked++;
        assert.ok(hasEventTopic(deployedBytecode, toEventSelector(event)), `${name} ${event.name}`);
      }
    }
    assert.equal(checked, 9);
    const consecutive = artifact("TestERC721Consecutive").deployedBytecode;
    assert.equal(
      hasEventTopic(consecutive, toEventSelector("ConsecutiveTransfer(uint256,uint256,address,address)")),
      false,
    );
  });

  test("an embedded contract's functions and events are not the factory's", () => {
    const factory = artifact("CollectionFactory").deployedBytecode;
    const erc721 = artifact("TestERC721");
    // The child's runtime code is in there, yet none of its selectors or topics count.
    assert.equal(factory.includes(erc721.deployedBytecode.slice(2, 2000)), true);
    assert.deepEqual(new Set(dispatcherSelectors(factory)), abiSelectors(artifact("CollectionFactory").abi));
    assert.equal(functionSelectors(factory).has(toFunctionSelector("ownerOf(uint256)")), false);
    assert.equal(hasEventTopic(factory, TRANSFER), false);
  });

  test("selectors a contract only calls are pushed, but are not dispatched on", () => {
    const market = artifact("TestMarketplace").deployedBytecode;
    const ownerOf = toFunctionSelector("ownerOf(uint256)");
    assert.equal(functionSelectors(market).has(ownerOf), true);
    assert.equal(dispatcherSelectors(market).has(ownerOf), false);
  });
});

describe("byte-code walking", () => {
  const push = (bytes: string) => `${(0x5f + bytes.length / 2).toString(16)}${bytes}`;
  const DISPATCH = (selector: string) => `80${push(selector)}1461010057`;

  test("PUSH immediates are skipped, so bytes inside them are not opcodes", () => {
    // A PUSH32 whose immediate holds a PUSH4 and a dispatcher-looking sequence.
    const hidden = `63a9059cbb1461010057${"00".repeat(22)}`;
    assert.equal(hidden.length, 64);
    const code = `0x${push(hidden)}${DISPATCH("70a08231")}00` as Hex;
    assert.deepEqual(functionSelectors(code), new Set(["0x70a08231"]));
    assert.deepEqual(pushedWords(code), new Set([`0x${hidden}`]));
  });

  test("a selector with leading zero bytes is pushed short and comes out padded", () => {
    const code = `0x${DISPATCH("fdd58e")}${DISPATCH("0e89341c")}00` as Hex;
    assert.deepEqual(dispatcherSelectors(code), new Set(["0x00fdd58e", "0x0e89341c"]));
    assert.equal(functionSelectors(code).has("0x00fdd58e"), true);
  });

  test("a PUSH4 that is not compared in a dispatcher is pushed but not dispatched", () => {
    const code = `0x${push("6352211e")}600052${DISPATCH("70a08231")}00` as Hex;
    assert.deepEqual(dispatcherSelectors(code), new Set(["0x70a08231"]));
    assert.deepEqual(functionSelectors(code), new Set(["0x6352211e", "0x70a08231"]));
  });

  test("the trailing CBOR metadata is not code", () => {
    // solc's `{"ipfs": <34 bytes>, "solc": 0.8.28}`; the hash holds a PUSH4 lookalike (0x63).
    const ipfs = `1220${"63aabbccdd".padEnd(64, "0")}`;
    const metadata = `a264697066735822${ipfs}64736f6c634300081c`;
    const length = (metadata.length / 2).toString(16).padStart(4, "0");
    const code = `0x${DISPATCH("70a08231")}fe${metadata}${length}` as Hex;
    assert.deepEqual(functionSelectors(code), new Set(["0x70a08231"]));
    // Without a valid length the same bytes are read as code.
    assert.equal(
      functionSelectors(`0x${DISPATCH("70a08231")}fe${metadata}ffff` as Hex).has("0xaabbccdd"),
      true,
    );
  });

  test("a push cut short by the end of the code, or empty code, yields nothing", () => {
    assert.deepEqual(functionSelectors("0x63aabbcc"), new Set());
    assert.deepEqual(functionSelectors("0x"), new Set());
    assert.deepEqual(pushedWords("0x7f00"), new Set());
  });
});

describe("classification rules beyond the recorded contracts", () => {
  const sel = (...signatures: string[]) => new Set(signatures.map((s) => toFunctionSelector(s)));
  const none = new Set<string>();
  const emitted = (...shapes: EventShape[]) => new Set<EventShape>(shapes);
  const classify = (evidence: Partial<ClassifyEvidence>) =>
    classifyContract({ selectors: none, eventTopics: none, emitted: emitted(), ...evidence });
  const erc20Functions = [
    "totalSupply()",
    "balanceOf(address)",
    "transfer(address,uint256)",
    "transferFrom(address,address,uint256)",
    "approve(address,uint256)",
    "allowance(address,address)",
  ];
  const erc721Functions = [
    "balanceOf(address)",
    "ownerOf(uint256)",
    "safeTransferFrom(address,address,uint256)",
    "safeTransferFrom(address,address,uint256,bytes)",
    "transferFrom(address,address,uint256)",
    "approve(address,uint256)",
    "setApprovalForAll(address,bool)",
    "getApproved(uint256)",
    "isApprovedForAll(address,address)",
  ];
  const no165 = { erc165: false, erc721: false, erc1155: false };

  test("a proxy is classified by its ERC-165 answers", () => {
    assert.deepEqual(classify({ supports: { erc165: true, erc721: true, erc1155: false } }), ["TYPE_ERC721"]);
    assert.deepEqual(classify({ supports: { erc165: true, erc721: false, erc1155: true } }), [
      "TYPE_ERC1155",
    ]);
    assert.deepEqual(classify({ supports: { erc165: true, erc721: true, erc1155: true } }), [
      "TYPE_ERC721",
      "TYPE_ERC1155",
    ]);
    // Interface answers from a contract that fails EIP-165's own probes mean nothing.
    assert.deepEqual(classify({ supports: { erc165: false, erc721: true, erc1155: true } }), []);
  });

  test("a proxy or an account without code is classified by the events it emitted", () => {
    assert.deepEqual(classify({ supports: no165, emitted: emitted("erc20-transfer") }), ["TYPE_ERC20"]);
    assert.deepEqual(classify({ emitted: emitted("erc721-transfer") }), ["TYPE_ERC721"]);
    assert.deepEqual(classify({ emitted: emitted("consecutive-transfer") }), ["TYPE_ERC721"]);
    assert.deepEqual(classify({ emitted: emitted("erc1155-transfer") }), ["TYPE_ERC1155"]);
    assert.deepEqual(classify({ emitted: emitted("unindexed-transfer") }), ["TYPE_ERC721_LEGACY"]);
    assert.deepEqual(classify({ emitted: emitted("punk-transfer", "erc20-transfer") }), ["TYPE_CRYPTOPUNKS"]);
    assert.deepEqual(classify({ emitted: emitted() }), []);
  });

  test("Assign alone does not make a punks contract: the signature is generic", () => {
    assert.deepEqual(classify({ emitted: emitted("punk-assign") }), []);
    assert.deepEqual(
      classify({
        selectors: sel("punkIndexToAddress(uint256)", "getPunk(uint256)", "transferPunk(address,uint256)"),
      }),
      ["TYPE_CRYPTOPUNKS"],
    );
  });

  test("an ERC-721 seen logging the token id in data is legacy too, so those logs are read", () => {
    assert.deepEqual(
      classify({
        supports: { erc165: true, erc721: true, erc1155: false },
        emitted: emitted("erc20-transfer"),
      }),
      ["TYPE_ERC721", "TYPE_ERC721_LEGACY"],
    );
  });

  test("a hybrid with the ERC-20 and ERC-721 functions is both, never legacy", () => {
    const hybrid = new Set([...sel(...erc20Functions), ...sel(...erc721Functions)]);
    assert.deepEqual(classify({ selectors: hybrid, emitted: emitted("erc20-transfer", "erc721-transfer") }), [
      "TYPE_ERC20",
      "TYPE_ERC721",
    ]);
  });

  test("a token that moves amounts is an ERC-20 whichever Transfer layout it logs", () => {
    const token = sel("balanceOf(address)", "transfer(address,uint256)");
    assert.deepEqual(classify({ selectors: token, emitted: emitted("erc721-transfer") }), ["TYPE_ERC20"]);
    assert.deepEqual(classify({ selectors: token, emitted: emitted("unindexed-transfer") }), ["TYPE_ERC20"]);
    assert.deepEqual(classify({ selectors: sel(...erc20Functions), emitted: emitted("erc721-transfer") }), [
      "TYPE_ERC20",
    ]);
  });

  test("an NFT with ERC-20-like transfer and balanceOf still counts its id-indexed Transfers as ERC-721", () => {
    // ownerOf says NFT: transfer(address,uint256) moves a token here, not an amount.
    const draft = sel("balanceOf(address)", "transfer(address,uint256)", "ownerOf(uint256)");
    assert.deepEqual(classify({ selectors: draft, emitted: emitted("erc721-transfer") }), ["TYPE_ERC721"]);
    assert.deepEqual(classify({ selectors: draft }), ["TYPE_ERC721_LEGACY"]);
  });

  test("a pre-standard NFT with transfer and tokensOfOwner or takeOwnership is legacy", () => {
    assert.deepEqual(classify({ selectors: sel("transfer(address,uint256)", "takeOwnership(uint256)") }), [
      "TYPE_ERC721_LEGACY",
    ]);
    assert.deepEqual(classify({ supports: { ...no165, erc165: true, erc721Legacy: true } }), [
      "TYPE_ERC721_LEGACY",
    ]);
  });

  test("ERC-1155 by its functions or by the events its code can emit", () => {
    assert.deepEqual(
      classify({
        selectors: sel(
          "safeTransferFrom(address,address,uint256,uint256,bytes)",
          "balanceOfBatch(address[],uint256[])",
        ),
      }),
      ["TYPE_ERC1155"],
    );
    assert.deepEqual(
      classify({
        eventTopics: new Set([toEventSelector("TransferBatch(address,address,address,uint256[],uint256[])")]),
      }),
      ["TYPE_ERC1155"],
    );
  });
});
