/** One NFT: its image, name and description, traits and rarity, owners, last sale and every transfer. */
import { CollectionLink, Empty, Load, WalletLink } from "../components/ui.tsx";
import { useApi } from "../context.ts";
import { amount, count, enumWords, shortToken, time, usd } from "../format.ts";
import { type Paid, type TransfersAnswer, TransferTable } from "./transfers.tsx";

interface Details {
  nft: {
    contractAddress: string;
    tokenId: string;
    type: string;
    metadata: { name: string; description: string; image: { uri: string; mimeType: string } | null } | null;
    mintEvent: { txHash: string; blockTimestamp: string } | null;
    collection: { name: string } | null;
  };
  metrics: { quantity: string; ownerCount: string } | null;
  lastSale: {
    blockchainEvent: { blockTimestamp: string; txHash: string };
    recipientPaid: Paid | null;
  } | null;
  rarity: { method: string; score: number; rank: string; collectionSize: string } | null;
}

interface Attribute {
  trait_type?: unknown;
  value?: unknown;
  display_type?: unknown;
}

/** The `attributes` of a metadata document, when it has readable ones. */
export function attributesOf(raw: string | undefined): { name: string; value: string }[] {
  if (raw === undefined) return [];
  try {
    const document = JSON.parse(raw) as { attributes?: unknown };
    if (!Array.isArray(document.attributes)) return [];
    return (document.attributes as Attribute[])
      .filter((a) => a !== null && typeof a === "object" && a.value !== undefined)
      .map((a) => ({
        name: typeof a.trait_type === "string" ? a.trait_type : "",
        value: typeof a.value === "object" ? JSON.stringify(a.value) : String(a.value),
      }));
  } catch {
    return [];
  }
}

export function NftPage({ address, tokenId }: { address: string; tokenId: string }) {
  const base = `/foundational/v1beta2/nfts/${address}/${tokenId}`;
  const details = useApi<Details>(`${base}/details`);
  const raw = useApi<{ metadata: { raw: string } | null }>(`${base}/raw_metadata`);
  const owners = useApi<{ owners: { address: string; quantity: string }[] }>(`${base}/owners?limit=20`);
  const transfers = useApi<TransfersAnswer>(
    `/foundational/v1beta2/transfers/nft?contractAddress=${address}&tokenId=${tokenId}&limit=50`,
  );
  if (details.error?.failure === "not-found") {
    return (
      <>
        <h1>No such NFT</h1>
        <p class="status error" role="alert">
          {details.error.message}. <a href={`#/collection/${address}`}>See the collection</a>.
        </p>
      </>
    );
  }
  if (details.error && details.data === undefined) {
    return (
      <>
        <h1>Token #{shortToken(tokenId)}</h1>
        <p class="status error" role="alert">
          Could not load the NFT: {details.error.message}
        </p>
      </>
    );
  }
  const nft = details.data?.nft;
  const meta = nft?.metadata;
  const title = meta?.name || `${nft?.collection?.name || "Token"} #${shortToken(tokenId)}`;
  const traits = attributesOf(raw.data?.metadata?.raw);
  const sale = details.data?.lastSale;
  const rarity = details.data?.rarity;
  return (
    <Load loading={details.loading} error={details.error} what="the NFT">
      <div class="nft">
        <div class="media">
          {meta?.image?.uri ? (
            <img src={meta.image.uri} alt={meta.name || title} width={320} height={320} />
          ) : (
            <div class="no-image" role="img" aria-label="No image known">
              #{shortToken(tokenId)}
            </div>
          )}
        </div>
        <div class="about">
          <h1>{title}</h1>
          <p class="sub">
            <CollectionLink address={address} name={nft?.collection?.name} /> · token{" "}
            <span class="mono">{tokenId}</span> · {enumWords(nft?.type ?? "", "TYPE_")}
          </p>
          {meta?.description && <p>{meta.description}</p>}
          <dl class="figures">
            <div>
              <dt>Minted</dt>
              <dd>{time(nft?.mintEvent?.blockTimestamp)}</dd>
            </div>
            <div>
              <dt>Supply</dt>
              <dd>{count(details.data?.metrics?.quantity)}</dd>
            </div>
            <div>
              <dt>Rarity</dt>
              <dd>
                {rarity ? `rank ${count(rarity.rank)} of ${count(rarity.collectionSize)}` : "not ranked"}
              </dd>
            </div>
            {rarity && (
              <div>
                <dt>Rarity score</dt>
                <dd>
                  {amount(String(rarity.score), 3)} ({enumWords(rarity.method, "RARITY_METHOD_")})
                </dd>
              </div>
            )}
          </dl>
        </div>
      </div>

      <section aria-labelledby="traits-title">
        <h2 id="traits-title">Traits</h2>
        {traits.length === 0 ? (
          <Empty>No traits known for this token.</Empty>
        ) : (
          <ul class="traits">
            {traits.map((t) => (
              <li key={`${t.name}=${t.value}`}>
                <span class="muted">{t.name || "trait"}</span> {t.value}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="sale-title">
        <h2 id="sale-title">Last sale</h2>
        {sale ? (
          <table class="breakdown">
            <caption class="visually-hidden">The last sale's price, part by part</caption>
            <tbody>
              <tr>
                <th scope="row">When</th>
                <td>{time(sale.blockchainEvent.blockTimestamp)}</td>
              </tr>
              <tr>
                <th scope="row">Price (native)</th>
                <td class="num">{amount(sale.recipientPaid?.totalNative, 6)}</td>
              </tr>
              <tr>
                <th scope="row">Price (USD)</th>
                <td class="num">{usd(sale.recipientPaid?.totalUsd)}</td>
              </tr>
              <tr>
                <th scope="row">Paid in native currency</th>
                <td class="num">{amount(sale.recipientPaid?.nativeTransfersTotal, 6)}</td>
              </tr>
              <tr>
                <th scope="row">Paid in tokens (as native)</th>
                <td class="num">{amount(sale.recipientPaid?.fungibleTransfersTotal, 6)}</td>
              </tr>
              {sale.recipientPaid?.fungibleTotals?.map((f) => (
                <tr key={f.contractAddress}>
                  <th scope="row">
                    Token <span class="mono">{f.contractAddress.slice(0, 10)}…</span>
                  </th>
                  <td class="num">{amount(f.totalNormalized, 6)}</td>
                </tr>
              ))}
              <tr>
                <th scope="row">Attributed by</th>
                <td>{enumWords(sale.recipientPaid?.attributedBy ?? "", "ATTRIBUTED_BY_")}</td>
              </tr>
            </tbody>
          </table>
        ) : (
          !details.loading && <Empty>No sales yet.</Empty>
        )}
      </section>

      <section aria-labelledby="owners-title">
        <h2 id="owners-title">Owners</h2>
        <Load loading={owners.loading} error={owners.error} what="the owners">
          {owners.data && owners.data.owners.length === 0 ? (
            <Empty>Nobody holds it: it was burned.</Empty>
          ) : (
            <ul class="owners">
              {owners.data?.owners.map((o) => (
                <li key={o.address}>
                  <WalletLink address={o.address} /> <span class="muted">× {count(o.quantity)}</span>
                </li>
              ))}
            </ul>
          )}
        </Load>
      </section>

      <section aria-labelledby="history-title">
        <h2 id="history-title">History</h2>
        <Load loading={transfers.loading} error={transfers.error} what="the transfers">
          <TransferTable
            id="history"
            transfers={transfers.data?.nftTransfers ?? []}
            caption="Every transfer of this token"
            showToken={false}
          />
        </Load>
      </section>
    </Load>
  );
}
