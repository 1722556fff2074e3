// One action: what it is, how it ended, the API request that caused it (request_id, herd's
// field), and everything that request caused: its actions (GET /v1/actions?request_id=..) and
// the events they recorded (GET /v1/events?request_id=..). The same id is on the server's access
// log line of that request, so an X-Openstack-Request-Id leads here and back.

import { ApiError, get, query } from "../api.js";
import { badge, duration, fill, fillIfChanged, h, short, table, time } from "../dom.js";

// The full length of a list of a summarised action (api.md: summary=true).
const count = (action, key) => (action.truncated || {})[key] ?? (action[key] || []).length;

export function actionView(actionId) {
  const el = {};

  async function refresh() {
    let one;
    try {
      one = await get(`/v1/actions/${encodeURIComponent(actionId)}${query({ summary: true })}`);
    } catch (failure) {
      if (!(failure instanceof ApiError) || failure.status !== 404) throw failure;
      fillIfChanged(el.summary, failure.message, (text) => [h("h1", { id: "not-found" }, "Action not found"), h("p", null, text)]);
      el.rest.hidden = true;
      return;
    }
    el.rest.hidden = false;
    const action = one.action;
    document.title = `${action.action} · herd`;
    fillIfChanged(el.summary, action, drawSummary);
    if (!action.request_id) {
      fill(el.caused, h("p", { class: "muted" }, "No API request caused this action (the engine or the health manager started it)."));
      return;
    }
    const [actions, events] = await Promise.all([
      get(`/v1/actions${query({ request_id: action.request_id, sort: "created_at:asc", limit: 200, summary: true })}`),
      get(`/v1/events${query({ request_id: action.request_id, sort: "timestamp:asc", limit: 200 })}`),
    ]);
    fillIfChanged(el.caused, { actions: actions.actions, events: events.events }, drawCaused);
  }

  function drawSummary(a) {
    const took = a.end_time && a.start_time ? duration(a.end_time - a.start_time) : a.start_time ? "running" : "queued";
    return [
      h("p", null, a.cluster_id
        ? h("a", { href: `/ui/clusters/${encodeURIComponent(a.cluster_id)}` }, "← Its cluster")
        : h("a", { href: "/ui/" }, "← All clusters")),
      h("h1", null, `Action ${a.action} `, badge(a.status)),
      h("p", null, a.status_reason),
      h("dl", { class: "facts", id: "action-facts" },
        h("dt", null, "Request"), h("dd", { id: "action-request", class: "mono" }, a.request_id || "—"),
        h("dt", null, "Target"), h("dd", { class: "mono" }, a.target),
        h("dt", null, "Cause"), h("dd", null, a.cause),
        h("dt", null, "Created"), h("dd", null, time(a.created_at)),
        h("dt", null, "Took"), h("dd", null, took),
        h("dt", null, "Inputs"), h("dd", { class: "mono" }, JSON.stringify(a.inputs || {})),
        h("dt", null, "Depends on"), h("dd", { id: "action-depends" }, `${count(a, "depends_on")} actions`),
        h("dt", null, "User / project"), h("dd", null, `${a.user} / ${a.project}`),
        h("dt", null, "Id"), h("dd", { class: "mono" }, a.id),
      ),
    ];
  }

  function drawCaused({ actions, events }) {
    return [
      table(
        "Actions the same request caused, oldest first (at most 200)",
        ["Action", "Status", "Target", "Created"],
        actions.map((a) => h("tr", { "data-caused": a.action },
          h("td", null, h("a", { href: `/ui/actions/${encodeURIComponent(a.id)}` }, a.action)),
          h("td", null, badge(a.status)),
          h("td", { class: "mono" }, short(a.target)),
          h("td", null, time(a.created_at)))),
        "No action.",
      ),
      table(
        "Events those actions recorded, oldest first (at most 200)",
        ["When", "Object", "Action", "Status", "Reason"],
        events.map((e) => h("tr", null,
          h("td", null, time(e.timestamp)),
          h("td", null, `${e.otype} ${e.oname || short(e.oid)}`),
          h("td", null, e.action),
          h("td", null, badge(e.status)),
          h("td", null, e.status_reason))),
        "No event.",
      ),
    ];
  }

  return {
    title: "Action",
    mount(main) {
      el.summary = h("div", { id: "action-summary" }, h("p", null, "Loading…"));
      el.caused = h("div", { id: "action-caused" });
      el.rest = h("section", { "aria-labelledby": "caused-h" },
        h("h2", { id: "caused-h" }, "What its request caused"), el.caused);
      fill(main, el.summary, el.rest);
    },
    refresh,
  };
}
