/**
 * A time series as a uPlot chart, with exactly the points the API returned (none added, none
 * dropped: `data-points` says how many), an accessible name, and the same points as a table under
 * a "Show data" disclosure for whoever cannot see the chart.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { axisTime, time } from "../format.ts";

export interface ChartSeries {
  label: string;
  values: readonly string[];
}

export interface ChartProps {
  id: string;
  title: string;
  /** What the values are in, for the accessible name and the table's headers. */
  unit: string;
  timestamps: readonly string[];
  series: readonly ChartSeries[];
}

/** Colours that keep 3:1 against both the light and the dark background. */
const COLOURS = ["#2f6fdb", "#c2410c", "#15803d"];

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#666";
}

export function Chart({ id, title, unit, timestamps, series }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const points = timestamps.length;
  useEffect(() => {
    const element = box.current;
    if (element === null || points === 0) return;
    const xs = timestamps.map((t) => Date.parse(t) / 1000);
    const span = (xs[xs.length - 1] ?? 0) - (xs[0] ?? 0);
    const withHours = span <= 86_400;
    const axisColour = cssVar("--muted");
    const gridColour = cssVar("--grid");
    const axis = {
      stroke: axisColour,
      grid: { stroke: gridColour, width: 1 },
      ticks: { stroke: gridColour, width: 1 },
    };
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height: 200,
      legend: { show: series.length > 1 },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: COLOURS[i % COLOURS.length],
          width: 2,
          points: { show: points <= 60, size: 5 },
        })),
      ],
      axes: [
        { ...axis, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => axisTime(t, withHours)) },
        { ...axis, size: 60 },
      ],
    };
    const data: uPlot.AlignedData = [xs, ...series.map((s) => s.values.map((v) => Number(v)))];
    const plot = new uPlot(options, data, element);
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(element.clientWidth, 200), height: 200 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [timestamps, series, points]);

  const first = timestamps[0];
  const last = timestamps[points - 1];
  const label =
    points === 0
      ? `${title}: no points`
      : `${title} in ${unit}: ${points} point${points === 1 ? "" : "s"} from ${time(first)} to ${time(last)}`;
  return (
    <figure class="chart" data-chart={id} data-points={points} aria-labelledby={`${id}-title`}>
      <figcaption>
        <h3 id={`${id}-title`}>{title}</h3>
      </figcaption>
      {points === 0 ? (
        <p class="empty">No points in this window.</p>
      ) : (
        <div class="plot" ref={box} role="img" aria-label={label} />
      )}
      <details>
        <summary>Show data</summary>
        <div class="scroll">
          <table>
            <caption class="visually-hidden">{label}</caption>
            <thead>
              <tr>
                <th scope="col">Time (UTC)</th>
                {series.map((s) => (
                  <th scope="col" key={s.label}>
                    {s.label} ({unit})
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {timestamps.map((t, i) => (
                <tr key={t}>
                  <td>{time(t)}</td>
                  {series.map((s) => (
                    <td class="num" key={s.label}>
                      {s.values[i]}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
