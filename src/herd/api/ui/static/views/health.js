// Health: recent detections and recoveries, from the events (every cluster of the project).

import { get, query } from "../api.js";
import { badge, fill, fillIfChanged, h, short, table, time } from "../dom.js";

// HEALTH_* are the health manager's own events (docs/health.md): what a check found, the
// recovery it started, and a recovery deferred by back-off.
const HEALTH_ACTIONS = [
  "NODE_CHECK", "CLUSTER_CHECK", "NODE_RECOVER", "CLUSTER_RECOVER", "NODE_MARK_UNHEALTHY",
  "NODE_MARK_HEALTHY", "CLUSTER_REPLACE_UNHEALTHY", "HEALTH_CHECK", "HEALTH_RECOVERY",
  "HEALTH_BACKOFF",
];
const RECOVERIES = new Set([
  "NODE_RECOVER", "CLUSTER_RECOVER", "CLUSTER_REPLACE_UNHEALTHY", "NODE_MARK_HEALTHY",
  "HEALTH_RECOVERY", "HEALTH_BACKOFF",
]);

export function isDetection(event) {
  if (event.status === "CHECK_FAILED" || event.action === "NODE_MARK_UNHEALTHY") return true;
  return (event.action === "NODE_CHECK" || event.action === "CLUSTER_CHECK") && event.level !== "INFO";
}

function rows(events, clusters) {
  return events.map((e) => h("tr", null,
    h("td", null, time(e.timestamp)),
    h("td", null, e.cluster_id ? h("a", { href: `/ui/clusters/${encodeURIComponent(e.cluster_id)}` }, clusters[e.cluster_id] || short(e.cluster_id)) : "—"),
    h("td", null, `${e.otype.toLowerCase()} ${e.oname || short(e.oid)}`),
    h("td", null, e.action),
    h("td", null, badge(e.status)),
    h("td", null, e.status_reason),
  ));
}

export function healthView() {
  let detections;
  let recoveries;
  return {
    title: "Health",
    mount(main) {
      detections = h("div", { id: "detections" }, h("p", null, "Loading…"));
      recoveries = h("div", { id: "recoveries" });
      fill(main,
        h("h1", null, "Health"),
        h("p", { class: "muted" }, "Members found unhealthy (by a check, the driver or an application's mark-unhealthy) and how they were recovered, newest first."),
        h("section", { "aria-labelledby": "det-h" }, h("h2", { id: "det-h" }, "Detections"), detections),
        h("section", { "aria-labelledby": "rec-h" }, h("h2", { id: "rec-h" }, "Recoveries"), recoveries));
    },
    async refresh() {
      const [health, recent, clusters] = await Promise.all([
        get(`/v1/events${query({ action: HEALTH_ACTIONS, sort: "timestamp:desc", limit: 200 })}`),
        get(`/v1/events${query({ sort: "timestamp:desc", limit: 200 })}`),
        get(`/v1/clusters${query({ show_nodes: false })}`),
      ]);
      const names = Object.fromEntries(clusters.clusters.map((c) => [c.id, c.name]));
      const seen = new Map();
      for (const e of [...health.events, ...recent.events]) seen.set(e.id, e);
      const events = [...seen.values()].sort((a, b) => (a.timestamp < b.timestamp ? 1 : -1));
      const found = events.filter(isDetection);
      const recovered = events.filter((e) => RECOVERIES.has(e.action));
      const headers = ["When", "Cluster", "Member", "Event", "Status", "Reason"];
      fillIfChanged(detections, { found, names }, () =>
        table("Detections", headers, rows(found, names), "No member was found unhealthy recently."));
      fillIfChanged(recoveries, { recovered, names }, () =>
        table("Recoveries", headers, rows(recovered, names), "No recovery recently."));
    },
  };
}
