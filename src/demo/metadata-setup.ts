/**
 * Where the demo's collections keep their metadata: one of every kind an indexer meets. Each
 * change is a transaction from an account of its own (so it never races the live activity's
 * nonces), and each is announced by the contract with EIP-4906's events.
 */
import { type Abi, keccak256, stringToHex } from "viem";
import type { Address } from "../core/hex.ts";
import type { ContractName } from "../devchain/artifacts.ts";
import { loadArtifact } from "../devchain/artifacts.ts";
import { connectDevChain, type DevChain, fundAndUnlock } from "../devchain/deploy.ts";
import type { DemoContracts } from "./contracts.ts";
import type { DemoMetadataServer } from "./metadata-server.ts";

/** The account that curates the demo's metadata. */
const CURATOR = `0x${keccak256(stringToHex("mintlens-demo:curator")).slice(-40)}` as Address;

/** Collection names as the metadata server serves them. */
export const DEMO_METADATA_NAMES = {
  mape: "Mintlens Apes",
  mcon: "Mintlens Consecutive",
  ipfs: "Factory Punks",
  arweave: "Mintlens Passes",
  editions: "Mintlens Editions",
} as const;

/** Tokens of the open collection whose documents are `data:` URIs set token by token. */
export const DEMO_INLINE_TOKENS = [2n, 3n] as const;

async function send(
  chain: DevChain,
  contract: Address,
  name: ContractName,
  functionName: string,
  args: unknown[],
): Promise<void> {
  const hash = await chain.walletClient.writeContract({
    address: contract,
    abi: loadArtifact(name).abi as Abi,
    functionName,
    args,
    account: CURATOR,
    chain: null,
  });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${name}.${functionName} on ${contract} reverted`);
}

/** An SVG drawn in the document itself (`image_data`), the document a percent-encoded `data:` URI. */
function inlineDocument(id: bigint): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><circle cx="50" cy="50" r="45" fill="#f3a712"/><text x="50" y="58" font-size="20" text-anchor="middle">#${id}</text></svg>`;
  const doc = {
    name: `Mintlens Apes #${id} (one of one)`,
    description: "A document kept in the token URI itself, its image drawn inside it.",
    image_data: svg,
    attributes: { Edition: "1/1", Level: "10" },
  };
  return `data:application/json;charset=utf-8,${encodeURIComponent(JSON.stringify(doc))}`;
}

/**
 * Points the collections at their metadata: plain http (the open collection, a few of its tokens
 * with `data:` documents of their own), IPFS and Arweave through the server's gateway stand-ins,
 * documents drawn on chain, an ERC-1155 `{id}` template, and a host whose documents are gone (the
 * consecutive collection, until `moveGoneMetadata`). The punks and the pre-standard collection
 * have no token URIs at all, as on mainnet.
 */
export async function pointDemoMetadata(
  rpcUrl: string,
  contracts: DemoContracts,
  server: DemoMetadataServer,
): Promise<void> {
  const chain = connectDevChain(rpcUrl);
  await fundAndUnlock(chain, [CURATOR], 10n ** 18n);
  await send(chain, contracts.erc721.address, "TestERC721", "setBaseURI", [server.httpBase("mape")]);
  for (const id of DEMO_INLINE_TOKENS) {
    await send(chain, contracts.erc721.address, "TestERC721", "setTokenURI", [id, inlineDocument(id)]);
  }
  await send(chain, contracts.erc721Create2.address, "TestERC721", "setBaseURI", [server.ipfsBase]);
  await send(chain, contracts.erc721Create.address, "TestERC721", "drawMetadataOnChain", []);
  await send(chain, contracts.paidMint.address, "PaidMintERC721", "setBaseURI", [server.arweaveBase]);
  await send(chain, contracts.erc1155.address, "TestERC1155", "setURI", [server.editionsUri]);
  await send(chain, contracts.erc721Consecutive.address, "TestERC721Consecutive", "setBaseURI", [
    server.goneBase,
  ]);
}

/** The consecutive collection's documents found again at a new home, announced by EIP-4906. */
export async function moveGoneMetadata(
  rpcUrl: string,
  contracts: DemoContracts,
  server: DemoMetadataServer,
): Promise<void> {
  await send(
    connectDevChain(rpcUrl),
    contracts.erc721Consecutive.address,
    "TestERC721Consecutive",
    "setBaseURI",
    [server.httpBase("mcon")],
  );
}
