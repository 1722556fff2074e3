// Clusters: name, status, members against desired (with min/max), policies, last action.

import { CLUSTER_ACTIONS, get, query } from "../api.js";
import { badge, fill, fillIfChanged, h, table, time } from "../dom.js";

export function clustersView() {
  let list;
  return {
    title: "Clusters",
    mount(main) {
      list = h("div", { id: "clusters" }, h("p", null, "Loading…"));
      fill(main, h("h1", null, "Clusters"), list);
    },
    async refresh() {
      const [clusters, policies, actions] = await Promise.all([
        get("/v1/clusters"),
        get("/v1/policies"),
        get(`/v1/actions${query({ sort: "created_at:desc", limit: 200, action: CLUSTER_ACTIONS })}`),
      ]);
      const policyNames = Object.fromEntries(policies.policies.map((p) => [p.id, p.name]));
      const last = {};
      for (const action of actions.actions) {
        if (action.cluster_id && !last[action.cluster_id]) last[action.cluster_id] = action;
      }
      const rows = clusters.clusters.map((c) => ({
        id: c.id, name: c.name, status: c.status, reason: c.status_reason,
        members: c.nodes.length, desired: c.desired_capacity, min: c.min_size, max: c.max_size,
        policies: c.policies.map((id) => policyNames[id] || id.slice(0, 8)),
        last: last[c.id] ? { action: last[c.id].action, status: last[c.id].status, at: last[c.id].created_at } : null,
      }));
      fillIfChanged(list, rows, draw);
    },
  };
}

function draw(rows) {
  return table(
    "Every cluster of your project",
    ["Name", "Status", "Members / desired", "Min – max", "Policies", "Last action"],
    rows.map((c) =>
      h("tr", { "data-cluster": c.name },
        h("td", null, h("a", { href: `/ui/clusters/${encodeURIComponent(c.id)}` }, c.name)),
        h("td", { title: c.reason }, badge(c.status)),
        h("td", { class: c.members === c.desired ? "" : "error" }, `${c.members} / ${c.desired}`),
        h("td", null, `${c.min} – ${c.max < 0 ? "∞" : c.max}`),
        h("td", null, c.policies.length ? c.policies.join(", ") : h("span", { class: "muted" }, "none")),
        h("td", null, c.last ? [c.last.action, " ", badge(c.last.status), " ", time(c.last.at)] : "—"),
      )),
    "No clusters yet: create one with herd cluster create.",
  );
}
