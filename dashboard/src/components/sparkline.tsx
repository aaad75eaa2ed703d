/**
 * A collection's sales volume as a small line, fetched only when its row comes into view: a
 * ranking of fifty rows then asks for a handful of series at a time rather than fifty at once.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { useApi } from "../context.ts";
import { amount } from "../format.ts";

interface VolumeSeries {
  dataPoints: { timestamp: string; volume: string }[];
}

const WIDTH = 96;
const HEIGHT = 24;

/** The polyline's points for values on a box of WIDTH × HEIGHT (a flat line for one value or all equal). */
export function linePoints(values: readonly number[]): string {
  const max = Math.max(...values, 0);
  const min = Math.min(...values, 0);
  const range = max - min || 1;
  const step = values.length > 1 ? WIDTH / (values.length - 1) : 0;
  return values
    .map((v, i) => `${(i * step).toFixed(1)},${(HEIGHT - 2 - ((v - min) / range) * (HEIGHT - 4)).toFixed(1)}`)
    .join(" ");
}

export function Sparkline({
  address,
  duration,
  period,
}: {
  address: string;
  duration: string;
  period: string;
}) {
  const box = useRef<HTMLSpanElement>(null);
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (element === null || seen) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        setSeen(true);
        observer.disconnect();
      }
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [seen]);
  const { data, error } = useApi<VolumeSeries>(
    seen ? `/collections/v1beta2/${address}/sales_volume/${duration}/${period}` : null,
  );
  const values = data?.dataPoints.map((p) => Number(p.volume)) ?? [];
  const label = data
    ? `Sales volume trend: ${values.length} points, from ${amount(data.dataPoints[0]?.volume)} to ${amount(data.dataPoints[values.length - 1]?.volume)}`
    : error
      ? "Trend unavailable"
      : "Trend loading";
  return (
    <span class="sparkline" ref={box} data-points={data ? values.length : undefined}>
      {data && values.length > 0 ? (
        <svg width={WIDTH} height={HEIGHT} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label}>
          <polyline points={linePoints(values)} fill="none" stroke="currentColor" stroke-width="1.5" />
        </svg>
      ) : (
        <span class="visually-hidden">{label}</span>
      )}
    </span>
  );
}
