/**
 * The demo's stand-in for the web its tokens' metadata lives on: one HTTP server on loopback that
 * plays an ordinary web host, an IPFS gateway, an Arweave gateway and a host whose documents have
 * gone, answering every token with a JSON document and an SVG image drawn from its id.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** The directory the demo's "pinned" collection lives under on IPFS (a well-formed CIDv1). */
export const DEMO_IPFS_CID = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi";
/** The demo's Arweave transaction holding a collection's documents (a well-formed id). */
export const DEMO_ARWEAVE_TX = "bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U";

const COLORS = ["#e4572e", "#29335c", "#f3a712", "#a8c686", "#669bbc", "#8d6a9f", "#2b9348", "#ff7b9c"];
const FURS = ["Gold", "Silver", "Cream", "Black", "Striped", "Spotted"];

function svg(id: bigint): string {
  const color = COLORS[Number(id % BigInt(COLORS.length))] ?? "#000";
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><rect width="100" height="100" fill="${color}"/><text x="50" y="58" font-size="20" text-anchor="middle" fill="#fff">#${id}</text></svg>`;
}

function document(name: string, id: bigint, image: string, externalUrl: string): string {
  return JSON.stringify({
    name: `${name} #${id}`,
    description: `Token ${id} of ${name}, a collection of the Mintlens demo chain.`,
    image,
    external_url: externalUrl,
    attributes: [
      { trait_type: "Fur", value: FURS[Number(id % BigInt(FURS.length))] },
      { trait_type: "Level", value: Number(id % 10n) + 1, display_type: "number" },
    ],
  });
}

export interface DemoMetadataServer {
  port: number;
  /** `http://127.0.0.1:<port>`: what the metadata worker is allowed to reach. */
  origin: string;
  /** Base URI of a collection served over plain http, by its path name. */
  httpBase(collection: string): string;
  /** Base URI of the collection on IPFS (`ipfs://<cid>/`), resolved through `ipfsGateway`. */
  ipfsBase: string;
  ipfsGateway: string;
  /** Base URI of the collection on Arweave (`ar://<tx>/`), resolved through `arweaveGateway`. */
  arweaveBase: string;
  arweaveGateway: string;
  /** An ERC-1155 URI template (`{id}`). */
  editionsUri: string;
  /** A base URI whose documents are gone: every one answers 404. */
  goneBase: string;
  close(): Promise<void>;
}

/**
 * `collections` names each collection by the path it is served under (http), or by `ipfs`,
 * `arweave` and `editions` for the collections on those.
 */
export async function startDemoMetadataServer(
  collections: Readonly<Record<string, string>>,
): Promise<DemoMetadataServer> {
  let origin = "";
  const server: Server = createServer((req, res) => {
    const path = req.url ?? "";
    const json = (body: string) => res.writeHead(200, { "content-type": "application/json" }).end(body);
    const image = (id: bigint) => res.writeHead(200, { "content-type": "image/svg+xml" }).end(svg(id));
    const edition = /^\/editions\/([0-9a-f]{64})(\.json|\.svg)$/.exec(path);
    if (edition && collections.editions !== undefined) {
      const id = BigInt(`0x${edition[1]}`);
      if (edition[2] === ".svg") return image(id);
      return json(
        document(collections.editions, id, `${origin}/editions/${edition[1]}.svg`, `${origin}/editions`),
      );
    }
    const ipfs = new RegExp(`^/ipfs/${DEMO_IPFS_CID}/(\\d{1,78})(\\.svg)?$`).exec(path);
    if (ipfs && collections.ipfs !== undefined) {
      const id = BigInt(ipfs[1] as string);
      if (ipfs[2]) return image(id);
      return json(
        document(
          collections.ipfs,
          id,
          `ipfs://${DEMO_IPFS_CID}/${id}.svg`,
          `${origin}/ipfs/${DEMO_IPFS_CID}`,
        ),
      );
    }
    const arweave = new RegExp(`^/arweave/${DEMO_ARWEAVE_TX}/(\\d{1,78})(\\.svg)?$`).exec(path);
    if (arweave && collections.arweave !== undefined) {
      const id = BigInt(arweave[1] as string);
      if (arweave[2]) return image(id);
      return json(
        document(collections.arweave, id, `ar://${DEMO_ARWEAVE_TX}/${id}.svg`, `${origin}/arweave`),
      );
    }
    const web = /^\/([a-z0-9]+)\/(\d{1,78})(\.svg)?$/.exec(path);
    const name = web?.[1] && Object.hasOwn(collections, web[1]) ? collections[web[1]] : undefined;
    if (web && name !== undefined && !["ipfs", "arweave", "editions", "gone"].includes(web[1] as string)) {
      const id = BigInt(web[2] as string);
      if (web[3]) return image(id);
      return json(document(name, id, `${origin}/${web[1]}/${id}.svg`, `${origin}/${web[1]}/${id}`));
    }
    return res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  return {
    port,
    origin,
    httpBase: (collection) => `${origin}/${collection}/`,
    ipfsBase: `ipfs://${DEMO_IPFS_CID}/`,
    ipfsGateway: origin,
    arweaveBase: `ar://${DEMO_ARWEAVE_TX}/`,
    arweaveGateway: `${origin}/arweave`,
    editionsUri: `${origin}/editions/{id}.json`,
    goneBase: `${origin}/gone/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
