/**
 * The demo's stand-in for the web its tokens' metadata lives on: an HTTP server on loopback that
 * answers every token of the demo's open ERC-721 collections with a JSON document and an SVG
 * image drawn from the token id, and the call that points those collections at it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Abi } from "viem";
import type { Address } from "../core/hex.ts";
import { loadArtifact } from "../devchain/artifacts.ts";
import { connectDevChain } from "../devchain/deploy.ts";

const COLORS = ["#e4572e", "#29335c", "#f3a712", "#a8c686", "#669bbc", "#8d6a9f", "#2b9348", "#ff7b9c"];
const FURS = ["Gold", "Silver", "Cream", "Black", "Striped", "Spotted"];

function svg(id: bigint): string {
  const color = COLORS[Number(id % BigInt(COLORS.length))] ?? "#000";
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect width="100" height="100" fill="${color}"/><text x="50" y="58" font-size="20" text-anchor="middle" fill="#fff">#${id}</text></svg>`;
}

export interface DemoMetadataServer {
  port: number;
  baseUri(symbol: string): string;
  close(): Promise<void>;
}

export async function startDemoMetadataServer(
  collections: Readonly<Record<string, string>>,
): Promise<DemoMetadataServer> {
  const server: Server = createServer((req, res) => {
    const m = /^\/([a-z0-9]+)\/(\d{1,78})(\.svg)?$/i.exec(req.url ?? "");
    const name = m?.[1] ? collections[m[1]] : undefined;
    if (!m || name === undefined) return res.writeHead(404).end();
    const id = BigInt(m[2] as string);
    if (m[3]) return res.writeHead(200, { "content-type": "image/svg+xml" }).end(svg(id));
    const port = (server.address() as AddressInfo).port;
    return res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        name: `${name} #${id}`,
        description: `Token ${id} of ${name}, a collection of the Mintlens demo chain.`,
        image: `http://127.0.0.1:${port}/${m[1]}/${id}.svg`,
        external_url: `http://127.0.0.1:${port}/${m[1]}/${id}`,
        attributes: [
          { trait_type: "Fur", value: FURS[Number(id % BigInt(FURS.length))] },
          { trait_type: "Level", value: Number(id % 10n) + 1, display_type: "number" },
        ],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    baseUri: (symbol) => `http://127.0.0.1:${port}/${symbol.toLowerCase()}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Points an open ERC-721 of the demo at `baseUri` (its `setBaseURI`; anyone may call it). */
export async function setBaseUri(rpcUrl: string, contract: Address, baseUri: string): Promise<void> {
  const chain = connectDevChain(rpcUrl);
  const [account] = await chain.walletClient.requestAddresses();
  if (account === undefined) throw new Error("the demo chain has no unlocked account");
  const { abi } = loadArtifact("TestERC721");
  const hash = await chain.walletClient.writeContract({
    address: contract,
    abi: abi as Abi,
    functionName: "setBaseURI",
    args: [baseUri],
    account,
    chain: null,
  });
  await chain.publicClient.waitForTransactionReceipt({ hash });
}
