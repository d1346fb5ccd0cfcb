/**
 * A time-series chart on uPlot (styles from its own CSS file; sizes through the CSSOM, which the CSP
 * allows). The chart is decorative for screen readers: every chart comes with a table or a summary.
 */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  values: number[];
  color: string;
  bars?: boolean;
}

export function TimeChart({
  times,
  series,
  height = 220,
  label,
}: {
  times: number[];
  series: Series[];
  height?: number;
  label: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const width = Math.max(280, el.clientWidth);
    // Axis and grid colours from the theme (light or dark), read when the chart is drawn.
    const css = getComputedStyle(el);
    const axis = css.getPropertyValue('--text-muted').trim() || '#545d6b';
    const grid = css.getPropertyValue('--border').trim() || '#eceef2';
    // A bar spans (nearly) its whole bucket: an hour's bar covers the hour it counts, not a sliver at its middle.
    const bars = uPlot.paths.bars?.({ size: [0.9, Infinity] });
    const plot = new uPlot(
      {
        width,
        height,
        legend: { show: series.length > 1 },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] } },
        axes: [
          { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
          { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 48 },
        ],
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            fill: s.bars ? `${s.color}cc` : `${s.color}22`,
            paths: s.bars ? bars : undefined,
            points: { show: false },
          })),
        ],
      },
      [times, ...series.map((s) => s.values)],
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [times, series, height]);
  return <div className="chart" ref={host} role="img" aria-label={label} />;
}
