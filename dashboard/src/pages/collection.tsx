/**
 * A collection: its figures, floor and spam verdict; supply, holders, prices and volume as charts
 * over a chosen window and period; its recent sales with their labels; its owners; its traits.
 */
import { useMemo } from "preact/hooks";
import { Chart, type ChartSeries } from "../components/chart.tsx";
import { Empty, Load, Picker, SpamBadge, WalletLink } from "../components/ui.tsx";
import { useApi } from "../context.ts";
import { amount, count, enumWords, shortAddress, usd } from "../format.ts";
import { DURATIONS, type Duration, defaultPeriod, type Period, periodsFor, routeHash } from "../route.ts";
import type { TransfersAnswer } from "./transfers.tsx";
import { TransferTable } from "./transfers.tsx";

interface Metadata {
  name: string;
  symbol: string;
  types: string[];
  metadata: { type: string; value: string }[];
  spam?: { isSpam: boolean; score: number; source: string } | null;
}
interface Totals {
  tokensCount: string;
  ownersCount: string;
  mintedCount: string;
  burnedCount: string;
  transfersCount: string;
  salesCount: string;
  salesVolume: string;
  flaggedSalesCount: string;
}
interface Floor {
  price: { totalNative: string | null; totalUsd: string | null } | null;
}
interface Series<P> {
  dataPoints: (P & { timestamp: string })[];
}

/** One chart's series from an answer, kept the same object while the answer is: no redraw without news. */
function useSeries<P>(
  answer: Series<P> | undefined,
  pick: Pick<P>,
): { timestamps: string[]; series: ChartSeries[] } | undefined {
  return useMemo(() => {
    if (answer === undefined) return undefined;
    return {
      timestamps: answer.dataPoints.map((p) => p.timestamp),
      series: pick.map(([label, f]) => ({ label, values: answer.dataPoints.map(f) })),
    };
  }, [answer]);
}

function SeriesChart<P>(props: { id: string; title: string; unit: string; path: string; pick: Pick<P> }) {
  const { data, error, loading } = useApi<Series<P>>(props.path);
  const shaped = useSeries(data, props.pick);
  return (
    <Load loading={loading} error={error} what={props.title.toLowerCase()}>
      {shaped && (
        <Chart
          id={props.id}
          title={props.title}
          unit={props.unit}
          timestamps={shaped.timestamps}
          series={shaped.series}
        />
      )}
    </Load>
  );
}

/** A chart's series: its label and how to read its value from a point. */
type Pick<P> = readonly (readonly [string, (p: P) => string])[];

const SUPPLY: Pick<{ minted: string; burned: string }> = [
  ["Minted", (p) => p.minted],
  ["Burned", (p) => p.burned],
];
const OWNERS: Pick<{ count: string }> = [["Owners", (p) => p.count]];
const PRICES: Pick<{ min: string; avg: string; max: string }> = [
  ["Min", (p) => p.min],
  ["Average", (p) => p.avg],
  ["Max", (p) => p.max],
];
const VOLUME: Pick<{ volume: string }> = [["Volume", (p) => p.volume]];

export function CollectionPage({
  address,
  duration,
  period,
}: {
  address: string;
  duration: Duration;
  period: Period;
}) {
  const meta = useApi<Metadata>(`/collections/v1beta2/${address}/metadata`);
  const totals = useApi<Totals>(`/collections/v1beta2/${address}/totals`);
  const floor = useApi<Floor>(`/marketplaces/v1beta2/floors/${address}`);
  const sales = useApi<TransfersAnswer>(
    `/foundational/v1beta2/transfers/nft?contractAddress=${address}&labelsAny=LABEL_SALE&limit=10`,
  );
  const owners = useApi<{ owner: { address: string; ownedCount: string }[] }>(
    `/collections/v1beta2/${address}/owners_list?limit=10`,
  );
  const strings = useApi<{
    traits: { name: string; value: string; nftsCount: string; nftsPercentage: number }[];
  }>(`/collections/v1beta2/${address}/traits/string?limit=50`);
  const numerics = useApi<{
    traits: { name: string; displayType: string; valueMin: number; valueMax: number }[];
  }>(`/collections/v1beta2/${address}/traits/numeric?limit=50`);

  if (meta.error?.failure === "not-found") {
    return (
      <>
        <h1>Unknown collection</h1>
        <p class="status error" role="alert">
          Mintlens has never seen a contract at <span class="mono">{address}</span>.{" "}
          <a href={`#/wallet/${address}`}>Look at it as a wallet</a> instead.
        </p>
      </>
    );
  }
  const image = meta.data?.metadata.find((m) => m.type === "TYPE_IMAGE_URL")?.value;
  const description = meta.data?.metadata.find((m) => m.type === "TYPE_DESCRIPTION")?.value;
  const go = (d: Duration, p: Period) => {
    location.hash = routeHash({ page: "collection", address, duration: d, period: p });
  };
  const base = `/collections/v1beta2/${address}`;
  const window = `${duration}/${period}`;
  const price = floor.data?.price;
  return (
    <>
      <div class="title">
        {image && <img class="avatar" src={image} alt="" width={64} height={64} />}
        <div>
          <h1>{meta.data?.name || shortAddress(address)}</h1>
          <p class="sub">
            <span class="mono">{address}</span> {meta.data?.symbol && <span>· {meta.data.symbol}</span>}{" "}
            {meta.data?.types.map((t) => (
              <span key={t}>· {enumWords(t, "TYPE_")}</span>
            ))}{" "}
            {meta.data && <SpamBadge spam={meta.data.spam} />}
          </p>
        </div>
      </div>
      {description && <p>{description}</p>}
      <Load loading={totals.loading} error={totals.error} what="the totals">
        <dl class="figures">
          <Figure term="Tokens" value={count(totals.data?.tokensCount)} />
          <Figure term="Owners" value={count(totals.data?.ownersCount)} />
          <Figure term="Sales" value={count(totals.data?.salesCount)} />
          <Figure term="Volume" value={amount(totals.data?.salesVolume)} />
          <Figure
            term="Floor"
            value={
              price?.totalNative
                ? `${amount(price.totalNative)}${price.totalUsd ? ` (${usd(price.totalUsd)})` : ""}`
                : "none known"
            }
          />
          <Figure term="Transfers" value={count(totals.data?.transfersCount)} />
        </dl>
      </Load>

      <section aria-labelledby="charts-title">
        <h2 id="charts-title">Activity</h2>
        <div class="pickers">
          <Picker
            label="Over the last"
            value={duration}
            values={DURATIONS}
            prefix="DURATION_"
            onPick={(d) => go(d, periodsFor(d).includes(period) ? period : defaultPeriod(d))}
          />
          <Picker
            label="By"
            value={period}
            values={periodsFor(duration)}
            prefix="GROUP_BY_PERIOD_"
            onPick={(p) => go(duration, p)}
          />
        </div>
        <div class="charts">
          <SeriesChart
            id="supply"
            title="Supply"
            unit="tokens"
            path={`${base}/supply/${window}`}
            pick={SUPPLY}
          />
          <SeriesChart
            id="owners"
            title="Holders"
            unit="owners"
            path={`${base}/owners_count/${window}`}
            pick={OWNERS}
          />
          <SeriesChart
            id="prices"
            title="Prices"
            unit="native"
            path={`${base}/prices/${window}`}
            pick={PRICES}
          />
          <SeriesChart
            id="volume"
            title="Sales volume"
            unit="native"
            path={`${base}/sales_volume/${window}`}
            pick={VOLUME}
          />
        </div>
      </section>

      <section aria-labelledby="sales-title">
        <h2 id="sales-title">Recent sales</h2>
        <Load loading={sales.loading} error={sales.error} what="the sales">
          {sales.data && sales.data.nftTransfers.length === 0 ? (
            <Empty>No sales yet.</Empty>
          ) : (
            <TransferTable
              id="sales"
              transfers={sales.data?.nftTransfers ?? []}
              caption="Recent sales"
              showToken
            />
          )}
        </Load>
      </section>

      <section aria-labelledby="owners-title">
        <h2 id="owners-title">Top owners</h2>
        <Load loading={owners.loading} error={owners.error} what="the owners">
          {owners.data && owners.data.owner.length === 0 ? (
            <Empty>No owners: every token was burned, or none minted.</Empty>
          ) : (
            <table>
              <caption class="visually-hidden">Top owners</caption>
              <thead>
                <tr>
                  <th scope="col">Owner</th>
                  <th scope="col" class="num">
                    Tokens held
                  </th>
                </tr>
              </thead>
              <tbody>
                {owners.data?.owner.map((o) => (
                  <tr key={o.address}>
                    <td>
                      <WalletLink address={o.address} />
                    </td>
                    <td class="num">{count(o.ownedCount)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Load>
      </section>

      <section aria-labelledby="traits-title">
        <h2 id="traits-title">Traits</h2>
        <Load
          loading={strings.loading || numerics.loading}
          error={strings.error ?? numerics.error}
          what="the traits"
        >
          {(strings.data?.traits.length ?? 0) + (numerics.data?.traits.length ?? 0) === 0 ? (
            <Empty>No traits known: the metadata was not fetched yet, or has none.</Empty>
          ) : (
            <div class="scroll">
              {(strings.data?.traits.length ?? 0) > 0 && (
                <table>
                  <caption>Text traits</caption>
                  <thead>
                    <tr>
                      <th scope="col">Trait</th>
                      <th scope="col">Value</th>
                      <th scope="col" class="num">
                        Tokens
                      </th>
                      <th scope="col" class="num">
                        Share
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {strings.data?.traits.map((t) => (
                      <tr key={`${t.name}\u0000${t.value}`}>
                        <td>{t.name}</td>
                        <td>{t.value}</td>
                        <td class="num">{count(t.nftsCount)}</td>
                        <td class="num">{amount(String(t.nftsPercentage), 2)}%</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              {(numerics.data?.traits.length ?? 0) > 0 && (
                <table>
                  <caption>Numeric traits</caption>
                  <thead>
                    <tr>
                      <th scope="col">Trait</th>
                      <th scope="col">Shown as</th>
                      <th scope="col" class="num">
                        Min
                      </th>
                      <th scope="col" class="num">
                        Max
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {numerics.data?.traits.map((t) => (
                      <tr key={t.name}>
                        <td>{t.name}</td>
                        <td>{enumWords(t.displayType, "DISPLAY_TYPE_")}</td>
                        <td class="num">{t.valueMin}</td>
                        <td class="num">{t.valueMax}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </div>
          )}
        </Load>
      </section>
    </>
  );
}

function Figure({ term, value }: { term: string; value: string }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </div>
  );
}
