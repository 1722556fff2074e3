// One node: its facts, the health manager's view of it (last check, failures, recoveries,
// back-off, and the cluster's health lease: GET /v1/clusters/<c>/health?member=<n>), its events
// (GET /v1/events?oid=<n>), and recover / delete / mark buttons. Every call is a /v1 call.

import { ApiError, api, get, query } from "../api.js";
import { badge, fill, fillIfChanged, h, table, time } from "../dom.js";
import { openMarkDialog } from "./mark.js";

export function nodeView(nodeId) {
  const el = {};
  let node = null;
  let cluster = null;

  async function refresh() {
    let one;
    try {
      one = await get(`/v1/nodes/${encodeURIComponent(nodeId)}`);
    } catch (failure) {
      if (!(failure instanceof ApiError) || failure.status !== 404) throw failure;
      document.title = "Node not found · herd";
      fillIfChanged(el.summary, failure.message, (text) => [h("h1", { id: "not-found" }, "Node not found"), h("p", null, text)]);
      el.rest.hidden = true;
      return;
    }
    el.rest.hidden = false;
    node = one.node;
    document.title = `${node.name} · herd`;
    const [events, health] = await Promise.all([
      get(`/v1/events${query({ oid: node.id, sort: "timestamp:desc", limit: 50 })}`),
      node.cluster_id ? get(`/v1/clusters/${encodeURIComponent(node.cluster_id)}/health${query({ member: node.id })}`) : null,
    ]);
    cluster = health ? { id: node.cluster_id, name: health.cluster_health.cluster_name } : null;
    fillIfChanged(el.summary, node, drawSummary);
    fillIfChanged(el.health, health && health.cluster_health, drawHealth);
    fillIfChanged(el.events, events.events, drawEvents);
  }

  function drawSummary(n) {
    const placement = (n.data && n.data.placement) || {};
    return [
      h("p", null, n.cluster_id
        ? h("a", { href: `/ui/clusters/${encodeURIComponent(n.cluster_id)}` }, "← Its cluster")
        : h("a", { href: "/ui/" }, "← All clusters")),
      h("h1", null, `Node ${n.name} `, badge(n.status), " ", badge(n.health)),
      h("p", null, n.status_reason),
      h("dl", { class: "facts", id: "node-facts" },
        h("dt", null, "Index"), h("dd", null, String(n.index)),
        h("dt", null, "Health reason"), h("dd", null, n.health_reason || "—"),
        h("dt", null, "Last check"), h("dd", { id: "node-last-check" },
          n.last_checked_at ? [badge(n.last_check_result), ` ${n.last_check_mode || ""} `, time(n.last_checked_at), ` ${n.last_check_reason || ""}`] : "never checked"),
        h("dt", null, "Zone / region"), h("dd", null, `${placement.zone || "—"} / ${placement.region_name || "—"}`),
        h("dt", null, "Physical id"), h("dd", { class: "mono" }, n.physical_id || "—"),
        h("dt", null, "Profile"), h("dd", null, n.profile_name || n.profile_id),
        h("dt", null, "Created"), h("dd", null, time(n.created_at)),
        h("dt", null, "Id"), h("dd", { class: "mono" }, n.id),
      ),
    ];
  }

  function drawHealth(health) {
    if (!health) return h("p", { class: "muted" }, "An orphan node: no cluster checks it.");
    const m = health.members[0] || {};
    const lease = health.lease;
    return h("dl", { class: "facts", id: "node-health" },
      h("dt", null, "Checking"), h("dd", null, badge(health.checking), health.suspended_by ? ` by ${health.suspended_by}` : ""),
      h("dt", null, "Failures"), h("dd", { id: "node-failures" }, String(m.failures ?? 0)),
      h("dt", null, "Recoveries"), h("dd", null, `${m.recoveries ?? 0} (${m.recoveries_in_a_row ?? 0} in a row)`),
      h("dt", null, "Last recovery"), h("dd", null, m.last_recovery_at ? [badge(m.last_recovery_result), " ", time(m.last_recovery_at)] : "—"),
      h("dt", null, "Back-off until"), h("dd", { id: "node-backoff" }, m.backoff_until ? time(m.backoff_until) : "not backing off"),
      h("dt", null, "Health lease"), h("dd", { id: "node-lease" }, lease
        ? [h("span", { class: "mono" }, lease.engine_id), " renewed ", time(lease.renewed_at)]
        : "no engine holds it"),
    );
  }

  function drawEvents(events) {
    return table(
      "The node's events, newest first",
      ["When", "Action", "Status", "Reason", "Request"],
      events.map((e) => h("tr", null,
        h("td", null, time(e.timestamp)),
        h("td", null, e.action),
        h("td", null, badge(e.status)),
        h("td", null, e.status_reason),
        h("td", { class: "mono" }, e.request_id || "—"))),
      "No event recorded for this node.",
    );
  }

  function buttons() {
    const error = h("p", { id: "node-error", class: "error", role: "alert" });
    const notice = h("p", { id: "node-notice", class: "notice", role: "status" });
    const act = async (text, call) => {
      error.textContent = "";
      notice.textContent = "";
      try {
        notice.textContent = text(await call());
        refresh().catch(() => {});
      } catch (failure) {
        if (!(failure instanceof ApiError)) throw failure;
        error.textContent = failure.message;
      }
    };
    let armed = false;
    const remove = h("button", {
      type: "button", id: "node-delete", class: "danger",
      onclick: () => {
        if (!armed) {
          armed = true;
          remove.textContent = "Confirm delete";
          return;
        }
        act(() => "Deletion started.", () => api("DELETE", `/v1/nodes/${encodeURIComponent(node.id)}`));
      },
    }, "Delete node");
    return h("section", { "aria-labelledby": "node-act-h" },
      h("h2", { id: "node-act-h" }, "Act"),
      h("div", { class: "buttons" },
        h("button", {
          type: "button", id: "node-recover",
          onclick: () => act((a) => `Recovery started: action ${a.action}.`,
            () => api("POST", `/v1/nodes/${encodeURIComponent(node.id)}/actions`, { recover: {} })),
        }, "Recover"),
        h("button", {
          type: "button", id: "node-mark", class: "secondary",
          onclick: () => cluster && openMarkDialog(cluster, node, node.health !== "CHECK_FAILED", () => refresh()),
        }, "Mark unhealthy / reset"),
        remove),
      error, notice);
  }

  return {
    title: "Node",
    mount(main) {
      el.summary = h("div", { id: "node-summary" }, h("p", null, "Loading…"));
      el.health = h("div", { id: "node-health-box" });
      el.events = h("div", { id: "node-events" });
      el.rest = h("div", null,
        buttons(),
        h("section", { "aria-labelledby": "node-health-h" }, h("h2", { id: "node-health-h" }, "Health checks"), el.health),
        h("section", { "aria-labelledby": "node-events-h" }, h("h2", { id: "node-events-h" }, "Events"), el.events));
      fill(main, el.summary, el.rest);
    },
    refresh,
  };
}
