/** A wallet's NFTs, without the collections judged spam unless asked for. */
import { useEffect, useState } from "preact/hooks";
import { CollectionLink, Empty, Load, SpamBadge, TokenLink } from "../components/ui.tsx";
import { useApi, useSession } from "../context.ts";
import { count } from "../format.ts";
import { routeHash } from "../route.ts";

interface WalletNft {
  nft: {
    contractAddress: string;
    tokenId: string;
    type: string;
    metadata: { name: string } | null;
    collection: { name: string } | null;
  };
  quantity: string;
  spam: { isSpam: boolean; score: number; source: string } | null;
}
interface WalletAnswer {
  nfts: WalletNft[];
  nextPageToken: string;
}

const LIMIT = 50;

export function WalletPage({ address, includeSpam }: { address: string; includeSpam: boolean }) {
  const { client } = useSession();
  const path = `/wallets/v1beta2/${address}/nfts?limit=${LIMIT}&includeSpam=${includeSpam}`;
  const first = useApi<WalletAnswer>(path);
  // Pages after the first, asked for with "Show more"; they start over when the first page changes.
  const [more, setMore] = useState<WalletNft[]>([]);
  const [token, setToken] = useState("");
  useEffect(() => {
    setMore([]);
    setToken(first.data?.nextPageToken ?? "");
  }, [first.data]);
  const nfts = [...(first.data?.nfts ?? []), ...more];
  return (
    <>
      <h1>
        Wallet <span class="mono break">{address}</span>
      </h1>
      <label class="toggle">
        <input
          type="checkbox"
          checked={includeSpam}
          onChange={(e) => {
            location.hash = routeHash({ page: "wallet", address, includeSpam: e.currentTarget.checked });
          }}
        />
        Include collections judged spam
      </label>
      <Load loading={first.loading} error={first.error} what="the NFTs">
        {first.data && nfts.length === 0 ? (
          <Empty>This wallet holds no NFTs{includeSpam ? "" : " outside spam collections"}.</Empty>
        ) : (
          <div class="scroll">
            <table data-table="wallet" data-rows={nfts.length}>
              <caption class="visually-hidden">The wallet's NFTs</caption>
              <thead>
                <tr>
                  <th scope="col">Collection</th>
                  <th scope="col">Token</th>
                  <th scope="col">Name</th>
                  <th scope="col" class="num">
                    Qty
                  </th>
                  <th scope="col">Spam</th>
                </tr>
              </thead>
              <tbody>
                {nfts.map((n) => (
                  <tr key={`${n.nft.contractAddress}/${n.nft.tokenId}`}>
                    <td>
                      <CollectionLink address={n.nft.contractAddress} name={n.nft.collection?.name} />
                    </td>
                    <td>
                      <TokenLink address={n.nft.contractAddress} tokenId={n.nft.tokenId} />
                    </td>
                    <td>{n.nft.metadata?.name || <span class="muted">—</span>}</td>
                    <td class="num">{count(n.quantity)}</td>
                    <td>
                      <SpamBadge spam={n.spam} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {token !== "" && (
          <button
            type="button"
            onClick={async () => {
              const page = await client.get<WalletAnswer>(`${path}&pageToken=${encodeURIComponent(token)}`);
              setMore((before) => [...before, ...page.nfts]);
              setToken(page.nextPageToken);
            }}
          >
            Show more
          </button>
        )}
      </Load>
    </>
  );
}
