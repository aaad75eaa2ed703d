import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import {
  type Abi,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  type PublicClient,
  parseAbi,
  stringToHex,
  toFunctionSelector,
  type WalletClient,
} from "viem";
import type { ChainClient } from "../../src/chain/rpc-types.ts";
import { TransientError } from "../../src/core/errors.ts";
import type { Address, Hex } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import {
  DECIMALS_CALLDATA,
  decodeBoolResult,
  decodeStringResult,
  decodeUint8Result,
  MAX_STRING_LENGTH,
  NAME_CALLDATA,
  SUPPORTS_INTERFACE_CALLDATA,
  SYMBOL_CALLDATA,
  supportsInterfaceCalldata,
} from "../../src/indexer/classify/calls.ts";
import { inspectContract } from "../../src/indexer/classify/inspect.ts";
import { INTERFACE_IDS, SELECTORS } from "../../src/indexer/classify/selectors.ts";
import type { EventShape } from "../../src/indexer/decode/shapes.ts";

const abiString = (value: string) => encodeAbiParameters([{ type: "string" }], [value]);
const word = (n: bigint) => n.toString(16).padStart(64, "0");

describe("selector and interface id constants", () => {
  test("each selector is the keccak-256 of its signature", () => {
    const signatures: Record<keyof typeof SELECTORS, string> = {
      totalSupply: "totalSupply()",
      balanceOf: "balanceOf(address)",
      transfer: "transfer(address,uint256)",
      transferFrom: "transferFrom(address,address,uint256)",
      approve: "approve(address,uint256)",
      allowance: "allowance(address,address)",
      ownerOf: "ownerOf(uint256)",
      safeTransferFrom: "safeTransferFrom(address,address,uint256)",
      safeTransferFromWithData: "safeTransferFrom(address,address,uint256,bytes)",
      getApproved: "getApproved(uint256)",
      setApprovalForAll: "setApprovalForAll(address,bool)",
      takeOwnership: "takeOwnership(uint256)",
      tokensOfOwner: "tokensOfOwner(address)",
      safeTransferFrom1155: "safeTransferFrom(address,address,uint256,uint256,bytes)",
      safeBatchTransferFrom: "safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)",
      balanceOfBatch: "balanceOfBatch(address[],uint256[])",
      punkIndexToAddress: "punkIndexToAddress(uint256)",
      transferPunk: "transferPunk(address,uint256)",
      buyPunk: "buyPunk(uint256)",
      name: "name()",
      symbol: "symbol()",
      decimals: "decimals()",
      supportsInterface: "supportsInterface(bytes4)",
    };
    for (const [key, signature] of Object.entries(signatures)) {
      assert.equal(SELECTORS[key as keyof typeof SELECTORS], toFunctionSelector(signature), signature);
    }
  });

  test("each interface id is the XOR of its interface's selectors (ERC-165)", () => {
    const xor = (...signatures: string[]) =>
      `0x${signatures
        .map((s) => Number.parseInt(toFunctionSelector(s).slice(2), 16))
        .reduce((a, b) => (a ^ b) >>> 0, 0)
        .toString(16)
        .padStart(8, "0")}`;
    assert.equal(INTERFACE_IDS.erc165, xor("supportsInterface(bytes4)"));
    assert.equal(
      INTERFACE_IDS.erc721,
      xor(
        "balanceOf(address)",
        "ownerOf(uint256)",
        "safeTransferFrom(address,address,uint256,bytes)",
        "safeTransferFrom(address,address,uint256)",
        "transferFrom(address,address,uint256)",
        "approve(address,uint256)",
        "setApprovalForAll(address,bool)",
        "getApproved(uint256)",
        "isApprovedForAll(address,address)",
      ),
    );
    assert.equal(
      INTERFACE_IDS.erc1155,
      xor(
        "safeTransferFrom(address,address,uint256,uint256,bytes)",
        "safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)",
        "balanceOf(address,uint256)",
        "balanceOfBatch(address[],uint256[])",
        "setApprovalForAll(address,bool)",
        "isApprovedForAll(address,address)",
      ),
    );
    // CryptoKitties' InterfaceSignature_ERC721, from its published source.
    assert.equal(
      INTERFACE_IDS.erc721Draft,
      xor(
        "name()",
        "symbol()",
        "totalSupply()",
        "balanceOf(address)",
        "ownerOf(uint256)",
        "approve(address,uint256)",
        "transfer(address,uint256)",
        "transferFrom(address,address,uint256)",
        "tokensOfOwner(address)",
        "tokenMetadata(uint256,string)",
      ),
    );
  });

  test("calldata is what viem encodes for the same calls", () => {
    const abi = parseAbi([
      "function name() view returns (string)",
      "function symbol() view returns (string)",
      "function decimals() view returns (uint8)",
      "function supportsInterface(bytes4 interfaceId) view returns (bool)",
    ]);
    assert.equal(NAME_CALLDATA, encodeFunctionData({ abi, functionName: "name" }));
    assert.equal(SYMBOL_CALLDATA, encodeFunctionData({ abi, functionName: "symbol" }));
    assert.equal(DECIMALS_CALLDATA, encodeFunctionData({ abi, functionName: "decimals" }));
    for (const [key, calldata] of Object.entries(SUPPORTS_INTERFACE_CALLDATA)) {
      const id = INTERFACE_IDS[key as keyof typeof INTERFACE_IDS];
      assert.equal(calldata, encodeFunctionData({ abi, functionName: "supportsInterface", args: [id] }), key);
    }
    assert.equal(supportsInterfaceCalldata("0x80AC58CD"), SUPPORTS_INTERFACE_CALLDATA.erc721);
    assert.throws(() => supportsInterfaceCalldata("0x80ac58"), RangeError);
  });
});

describe("decodeStringResult", () => {
  test("an ABI-encoded string", () => {
    assert.equal(decodeStringResult(abiString("Wrapped Ether")), "Wrapped Ether");
    assert.equal(decodeStringResult(abiString("Pudgy Penguins 🐧")), "Pudgy Penguins 🐧");
    assert.equal(decodeStringResult(abiString("Ͼ")), "Ͼ");
  });

  test("a bytes32, right-padded with NULs, as MKR and SAI return", () => {
    // MKR's symbol() and name() return bytes32.
    assert.equal(decodeStringResult(stringToHex("MKR", { size: 32 })), "MKR");
    assert.equal(decodeStringResult(stringToHex("Maker", { size: 32 })), "Maker");
    assert.equal(decodeStringResult(stringToHex("x".repeat(32))), "x".repeat(32));
    // Bytes after the first NUL are not part of it.
    assert.equal(decodeStringResult(`${stringToHex("SAI\0junk", { size: 32 })}`), "SAI");
  });

  test("empty answers are undefined", () => {
    assert.equal(decodeStringResult(undefined), undefined);
    assert.equal(decodeStringResult("0x"), undefined);
    assert.equal(decodeStringResult(abiString("")), undefined);
    assert.equal(decodeStringResult(`0x${"00".repeat(32)}`), undefined);
    assert.equal(decodeStringResult(abiString("\0\0\0")), undefined);
    assert.equal(decodeStringResult(abiString("  \t\n ")), undefined);
  });

  test("garbage is undefined", () => {
    assert.equal(decodeStringResult("0x1234"), undefined);
    // A number where a string should be.
    assert.equal(
      decodeStringResult(encodeAbiParameters([{ type: "uint256" }, { type: "uint256" }], [12n, 0n])),
      undefined,
    );
    // Offset past the end; offset of 2**255; length past the end.
    assert.equal(decodeStringResult(`0x${word(0x1000n)}${word(3n)}${"61".repeat(32)}`), undefined);
    assert.equal(decodeStringResult(`0x${word(2n ** 255n)}${word(3n)}${"61".repeat(32)}`), undefined);
    assert.equal(decodeStringResult(`0x${word(0x20n)}${word(33n)}${"61".repeat(32)}`), undefined);
    assert.equal(decodeStringResult(`0x${word(0x20n)}`), undefined);
    assert.equal(decodeStringResult("0xnothex"), undefined);
  });

  test("invalid UTF-8, NULs, control and bidi characters are stripped", () => {
    const raw = (bytes: number[]) =>
      `0x${word(0x20n)}${word(BigInt(bytes.length))}${Buffer.from(bytes)
        .toString("hex")
        .padEnd(64 * Math.ceil(bytes.length / 32), "0")}` as Hex;
    // "Ab" with an invalid byte (0xff), a truncated sequence (0xe2 0x82) and a NUL between.
    assert.equal(decodeStringResult(raw([0x41, 0xff, 0x62, 0xe2, 0x82, 0x00, 0x43])), "AbC");
    assert.equal(decodeStringResult(abiString("Bored\u0007 Ape\r\n\u0000")), "Bored Ape");
    assert.equal(decodeStringResult(abiString("\u202egnp.exe")), "gnp.exe");
    assert.equal(decodeStringResult(abiString("\u0085C1 control")), "C1 control");
  });

  test("long strings are cut to MAX_STRING_LENGTH characters, never inside a character", () => {
    assert.equal(decodeStringResult(abiString("a".repeat(10_000)))?.length, MAX_STRING_LENGTH);
    const emoji = decodeStringResult(abiString("🐧".repeat(1_000)));
    assert.equal(Array.from(emoji ?? "").length, MAX_STRING_LENGTH);
    assert.equal(emoji, "🐧".repeat(MAX_STRING_LENGTH));
  });
});

describe("decodeBoolResult and decodeUint8Result", () => {
  test("bool", () => {
    assert.equal(decodeBoolResult(encodeAbiParameters([{ type: "bool" }], [true])), true);
    assert.equal(decodeBoolResult(encodeAbiParameters([{ type: "bool" }], [false])), false);
    assert.equal(decodeBoolResult(`0x${word(2n)}`), undefined);
    assert.equal(decodeBoolResult(`0x${word(1n << 200n)}`), undefined);
    assert.equal(decodeBoolResult("0x01"), undefined);
    assert.equal(decodeBoolResult("0x"), undefined);
    assert.equal(decodeBoolResult(undefined), undefined);
    // Extra words after the first are ignored, as Solidity's decoder does.
    assert.equal(decodeBoolResult(`0x${word(1n)}${word(7n)}`), true);
  });

  test("uint8", () => {
    assert.equal(decodeUint8Result(encodeAbiParameters([{ type: "uint8" }], [18])), 18);
    assert.equal(decodeUint8Result(encodeAbiParameters([{ type: "uint256" }], [0n])), 0);
    assert.equal(decodeUint8Result(encodeAbiParameters([{ type: "uint256" }], [255n])), 255);
    assert.equal(decodeUint8Result(encodeAbiParameters([{ type: "uint256" }], [256n])), undefined);
    assert.equal(decodeUint8Result(encodeAbiParameters([{ type: "uint256" }], [2n ** 255n])), undefined);
    assert.equal(decodeUint8Result("0x12"), undefined);
    assert.equal(decodeUint8Result(undefined), undefined);
  });
});

/** A node that answers from tables: code by address, call results by address and calldata. */
function scriptedClient(
  code: Record<Address, Hex>,
  calls: Record<Address, Record<Hex, Hex | "revert" | "fault">>,
): ChainClient & { blocks: (number | undefined)[] } {
  const blocks: (number | undefined)[] = [];
  const unused = () => Promise.reject(new Error("not used by inspectContract"));
  return {
    url: "scripted",
    blocks,
    chainId: unused,
    blockNumber: unused,
    getLogs: unused,
    getBlockLogs: unused,
    getHeaders: unused,
    getTransactionSender: unused,
    traceApi: unused,
    getTracedCreations: unused,
    getTraces: unused,
    getTransaction: unused,
    getReceiptCreations: unused,
    close: () => Promise.resolve(),
    getCode: async (address, block) => {
      blocks.push(block);
      return code[address] ?? "0x";
    },
    call: async (to, data, block) => {
      blocks.push(block);
      const answer = calls[to]?.[data];
      if (answer === "fault") throw new TransientError("node overloaded");
      if (answer === "revert" || code[to] === undefined) return undefined;
      // A function the contract lacks, without a fallback: a revert.
      return answer;
    },
  };
}

const CK_CODE = (
  JSON.parse(
    readFileSync(
      new URL(
        "../fixtures/realdata/ethereum-etl/erc721_contract_cryptokitties/eth_getCode_0x06012c8cf97bead5deae237070f9587f8e7a266d.json",
        import.meta.url,
      ),
      "utf8",
    ),
  ) as { result: Hex }
).result;
const CK = "0x06012c8cf97bead5deae237070f9587f8e7a266d" as Address;

function artifact(name: string): { abi: Abi; bytecode: Hex; deployedBytecode: Hex } {
  return JSON.parse(readFileSync(new URL(`../../contracts/artifacts/${name}.json`, import.meta.url), "utf8"));
}

const bool = (value: boolean) => encodeAbiParameters([{ type: "bool" }], [value]);

describe("inspectContract against a scripted node", () => {
  test("CryptoKitties, with its recorded code and its real answers", async () => {
    const client = scriptedClient(
      { [CK]: CK_CODE },
      {
        [CK]: {
          [SUPPORTS_INTERFACE_CALLDATA.erc165]: bool(true),
          [SUPPORTS_INTERFACE_CALLDATA.invalid]: bool(false),
          [SUPPORTS_INTERFACE_CALLDATA.erc721]: bool(false),
          [SUPPORTS_INTERFACE_CALLDATA.erc1155]: bool(false),
          [SUPPORTS_INTERFACE_CALLDATA.erc721Draft]: bool(true),
          [NAME_CALLDATA]: abiString("CryptoKitties"),
          [SYMBOL_CALLDATA]: abiString("CK"),
          [DECIMALS_CALLDATA]: "revert",
        },
      },
    );
    const emitted = new Set<EventShape>(["unindexed-transfer"]);
    const inspection = await inspectContract(client, CK, emitted, 4_605_167);
    assert.deepEqual(inspection, {
      types: ["TYPE_ERC721_LEGACY"],
      name: "CryptoKitties",
      symbol: "CK",
      decimals: 0,
    });
    assert.equal(client.blocks.length, 9);
    assert.equal(
      client.blocks.every((block) => block === 4_605_167),
      true,
    );
  });

  test("an ERC-20 answering bytes32 name and symbol, as MKR does", async () => {
    const mkr = "0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2" as Address;
    const client = scriptedClient(
      { [mkr]: artifact("TestERC20").deployedBytecode },
      {
        [mkr]: {
          [NAME_CALLDATA]: stringToHex("Maker", { size: 32 }),
          [SYMBOL_CALLDATA]: stringToHex("MKR", { size: 32 }),
          [DECIMALS_CALLDATA]: encodeAbiParameters([{ type: "uint8" }], [18]),
        },
      },
    );
    const inspection = await inspectContract(client, mkr, new Set(["erc20-transfer"]));
    assert.deepEqual(inspection, { types: ["TYPE_ERC20"], name: "Maker", symbol: "MKR", decimals: 18 });
    assert.deepEqual(new Set(client.blocks), new Set([undefined]));
  });

  test("a fallback that answers true to everything is not taken for ERC-165", async () => {
    const proxy = "0x00000000000000000000000000000000000fa11b" as Address;
    // An EIP-1167 minimal proxy: no selectors of its own.
    const code: Hex = `0x363d3d373d3d3d363d73${"bebebebebebebebebebebebebebebebebebebebe"}5af43d82803e903d91602b57fd5bf3`;
    const yes = Object.fromEntries(Object.values(SUPPORTS_INTERFACE_CALLDATA).map((c) => [c, bool(true)]));
    const client = scriptedClient({ [proxy]: code }, { [proxy]: yes });
    assert.deepEqual((await inspectContract(client, proxy, new Set())).types, []);
    assert.deepEqual((await inspectContract(client, proxy, new Set(["erc20-transfer"]))).types, [
      "TYPE_ERC20",
    ]);
  });

  test("an account without code is classified by its emitted events alone", async () => {
    const gone = "0x000000000000000000000000000000000000c0de" as Address;
    const client = scriptedClient({}, {});
    assert.deepEqual(await inspectContract(client, gone, new Set(["erc721-transfer"]), 10), {
      types: ["TYPE_ERC721"],
      name: "",
      symbol: "",
      decimals: 0,
    });
    assert.deepEqual((await inspectContract(client, gone, new Set(["erc20-transfer"]))).types, [
      "TYPE_ERC20",
    ]);
  });

  test("a node fault is not a revert: inspection fails instead of storing a wrong answer", async () => {
    const client = scriptedClient(
      { [CK]: CK_CODE },
      { [CK]: { [SUPPORTS_INTERFACE_CALLDATA.erc721]: "fault" } },
    );
    await assert.rejects(inspectContract(client, CK, new Set()), TransientError);
  });
});

describe("inspectContract against contracts deployed on anvil", () => {
  let anvil: Anvil;
  let publicClient: PublicClient;
  let walletClient: WalletClient;
  let client: ChainClient;
  let deployer: Address;

  /** The ChainClient calls inspectContract makes, over viem; a revert answers undefined. */
  function viemChainClient(): ChainClient {
    const unused = () => Promise.reject(new Error("not used by inspectContract"));
    const tag = (block?: number) => (block === undefined ? "latest" : (`0x${block.toString(16)}` as const));
    return {
      url: anvil.url,
      chainId: unused,
      blockNumber: unused,
      getLogs: unused,
      getBlockLogs: unused,
      getHeaders: unused,
      getTransactionSender: unused,
      traceApi: unused,
      getTracedCreations: unused,
      getTraces: unused,
      getTransaction: unused,
      getReceiptCreations: unused,
      close: () => Promise.resolve(),
      getCode: async (address, block) =>
        (await publicClient.request({ method: "eth_getCode", params: [address, tag(block)] })) as Hex,
      call: async (to, data, block) => {
        try {
          return (await publicClient.request({
            method: "eth_call",
            params: [{ to, data }, tag(block)],
          })) as Hex;
        } catch (error) {
          if (/revert/i.test(String(error))) return undefined;
          throw error;
        }
      },
    };
  }

  async function deploy(name: string, args: unknown[]): Promise<{ address: Address; block: number }> {
    const { abi, bytecode } = artifact(name);
    const hash = await walletClient.deployContract({ abi, bytecode, args, account: deployer, chain: null });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.ok(receipt.contractAddress, `${name} was deployed`);
    return { address: receipt.contractAddress.toLowerCase() as Address, block: Number(receipt.blockNumber) };
  }

  before(async () => {
    anvil = await startAnvil();
    publicClient = createPublicClient({ transport: http(anvil.url), pollingInterval: 20 });
    walletClient = createWalletClient({ transport: http(anvil.url) });
    const [first] = await walletClient.requestAddresses();
    assert.ok(first, "anvil has unlocked accounts");
    deployer = first.toLowerCase() as Address;
    client = viemChainClient();
  });

  after(async () => {
    await anvil?.stop();
  });

  test("each kind of token is told apart, with its name, symbol and decimals", async () => {
    const cases: [string, unknown[], Awaited<ReturnType<typeof inspectContract>>][] = [
      [
        "TestERC20",
        ["Test Dollar", "TUSD"],
        { types: ["TYPE_ERC20"], name: "Test Dollar", symbol: "TUSD", decimals: 18 },
      ],
      [
        "TestERC721",
        ["Test Apes", "TAPE"],
        { types: ["TYPE_ERC721"], name: "Test Apes", symbol: "TAPE", decimals: 0 },
      ],
      [
        "TestERC1155",
        ["https://nft.example/{id}.json"],
        { types: ["TYPE_ERC1155"], name: "", symbol: "", decimals: 0 },
      ],
      [
        "LegacyERC721",
        ["Kitties", "KITTY"],
        { types: ["TYPE_ERC721_LEGACY"], name: "Kitties", symbol: "KITTY", decimals: 0 },
      ],
      [
        "CryptoPunksMarket",
        [10n],
        { types: ["TYPE_CRYPTOPUNKS"], name: "CRYPTOPUNKS", symbol: "Ͼ", decimals: 0 },
      ],
      ["TestMarketplace", [], { types: [], name: "", symbol: "", decimals: 0 }],
    ];
    for (const [name, args, expected] of cases) {
      const { address, block } = await deploy(name, args);
      assert.deepEqual(await inspectContract(client, address, new Set(), block), expected, name);
    }
  });

  test("before its deployment block a contract has no code", async () => {
    const { address, block } = await deploy("TestERC721", ["Later", "LATE"]);
    assert.deepEqual(await inspectContract(client, address, new Set(), block - 1), {
      types: [],
      name: "",
      symbol: "",
      decimals: 0,
    });
  });
});
