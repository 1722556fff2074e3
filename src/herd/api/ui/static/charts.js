// Charts drawn with the vendored uPlot (static/vendor, see VERSIONS): no network needed.

import { h } from "./dom.js";

function width(container) {
  return Math.max(320, Math.floor(container.getBoundingClientRect().width || 600));
}

const AXIS = { stroke: "#1b1f24", grid: { stroke: "#e3e7ee" }, ticks: { stroke: "#cfd6e0" } };

// Members over time: a step line through [epoch seconds], [size].
export function sizeChart(container, times, sizes, label) {
  container.replaceChildren();
  container.setAttribute("role", "img");
  container.setAttribute("aria-label", label);
  if (!window.uPlot || times.length < 1) {
    container.append(h("p", { class: "muted" }, "No membership change recorded yet."));
    return;
  }
  const opts = {
    width: width(container),
    height: 220,
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max + 1)] } },
    series: [
      {},
      {
        label: "members",
        stroke: "#1546a8",
        width: 2,
        fill: "rgba(21, 70, 168, 0.10)",
        paths: window.uPlot.paths.stepped({ align: 1 }),
        points: { show: true, size: 5 },
      },
    ],
    axes: [{ ...AXIS }, { ...AXIS, label: "members" }],
    legend: { show: true },
  };
  new window.uPlot(opts, [times, sizes], container);
}

// Per-host grouped bars: before and after, for one resource.
export function beforeAfterBars(container, hosts, before, after, unit, label) {
  container.replaceChildren();
  container.setAttribute("role", "img");
  container.setAttribute("aria-label", label);
  if (!window.uPlot || !hosts.length) return;
  const xs = hosts.map((_name, i) => i);
  const bars = (offset) => window.uPlot.paths.bars({ size: [0.35, 60], align: offset });
  const opts = {
    width: width(container),
    height: 240,
    scales: { x: { time: false, range: [-0.6, hosts.length - 0.4] }, y: { range: (_u, _min, max) => [0, max * 1.1 || 1] } },
    series: [
      {},
      { label: `used before (${unit})`, fill: "#8fa9dc", stroke: "#1546a8", paths: bars(-1), points: { show: false } },
      { label: `used after (${unit})`, fill: "#f2b27a", stroke: "#9a3412", paths: bars(1), points: { show: false } },
    ],
    axes: [
      { ...AXIS, values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? hosts[t] || "" : "")), incrs: [1] },
      { ...AXIS, label: unit },
    ],
  };
  new window.uPlot(opts, [xs, before, after], container);
}
