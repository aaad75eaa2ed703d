/** The top collections by one metric over one window, each with the trend of its sales volume. */
import { Sparkline } from "../components/sparkline.tsx";
import { CollectionLink, Empty, Load, Picker } from "../components/ui.tsx";
import { useApi } from "../context.ts";
import { amount, count, enumWords } from "../format.ts";
import { DURATIONS, type Duration, defaultPeriod, METRICS, type Metric, routeHash } from "../route.ts";

interface TopCollections {
  collections: {
    contractAddress: string;
    contractName: string;
    salesVolume?: string;
    salesCount?: string;
    maxPrice?: string;
    avgPrice?: string;
    metricValue: string;
    flaggedSalesCount: string;
  }[];
}

const LIMIT = 25;

export function TopPage({ metric, duration }: { metric: Metric; duration: Duration }) {
  const { data, error, loading } = useApi<TopCollections>(
    `/collections/v1beta2/top/${metric}/${duration}?limit=${LIMIT}`,
  );
  const go = (m: Metric, d: Duration) => {
    location.hash = routeHash({ page: "top", metric: m, duration: d });
  };
  const metricName = enumWords(metric, "METRIC_");
  // Beside the ranked value, the volume; or, when the volume is what is ranked, the number of sales.
  const byVolume = metric === "METRIC_SALES_VOLUME";
  return (
    <>
      <h1>Top collections</h1>
      <div class="pickers">
        <Picker label="By" value={metric} values={METRICS} prefix="METRIC_" onPick={(m) => go(m, duration)} />
        <Picker
          label="Over the last"
          value={duration}
          values={DURATIONS}
          prefix="DURATION_"
          onPick={(d) => go(metric, d)}
        />
      </div>
      <Load loading={loading} error={error} what="the ranking">
        {data && data.collections.length === 0 ? (
          <Empty>No sales in this window yet.</Empty>
        ) : (
          <div class="scroll">
            <table class="ranking" data-rows={data?.collections.length}>
              <caption class="visually-hidden">
                Top collections by {metricName} over the last {enumWords(duration, "DURATION_")}
              </caption>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Collection</th>
                  <th scope="col" class="num">
                    {metricName.charAt(0).toUpperCase() + metricName.slice(1)}
                  </th>
                  <th scope="col" class="num">
                    {byVolume ? "Sales" : "Volume"}
                  </th>
                  <th scope="col">Trend</th>
                </tr>
              </thead>
              <tbody>
                {data?.collections.map((c, i) => (
                  <tr key={c.contractAddress}>
                    <td>{i + 1}</td>
                    <td>
                      <CollectionLink address={c.contractAddress} name={c.contractName} />
                    </td>
                    <td class="num">
                      {metric === "METRIC_SALES_QUANTITY" ? count(c.metricValue) : amount(c.metricValue)}
                    </td>
                    <td class="num">{byVolume ? count(c.salesCount) : amount(c.salesVolume)}</td>
                    <td>
                      <Sparkline
                        address={c.contractAddress}
                        duration={duration === "DURATION_1_HOUR" ? "DURATION_1_DAY" : duration}
                        period={defaultPeriod(duration === "DURATION_1_HOUR" ? "DURATION_1_DAY" : duration)}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Load>
      <p class="hint">
        Amounts are in the chain's native currency. Flagged sales (wash trades) are left out.
      </p>
    </>
  );
}
