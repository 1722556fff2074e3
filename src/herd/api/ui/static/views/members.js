// A cluster's members, one page at a time: filtered, sorted and paged by the API
// (GET /v1/nodes?cluster_id=..&limit=..&marker=..&sort=..&status=..&health=..&zone=..&region=..&name=..),
// so a 100,000-member cluster costs one page of rows. Each row can be marked unhealthy or reset,
// recovered, or deleted; the name opens the node page.

import { ApiError, api, constants, get, query } from "../api.js";
import { badge, fill, fillIfChanged, h, short, table, time } from "../dom.js";
import { openMarkDialog } from "./mark.js";

const PAGE_SIZES = [25, 50, 100, 200];
const SORTS = [
  ["index", "Index"], ["name", "Name"], ["status", "Status"], ["health", "Health"], ["created_at", "Created"],
];
const FILTERS = ["status", "health", "zone", "region", "name"];

function yesNo(value) {
  const truthy = ["1", "true", "yes", "on", "y", "t"].includes(String(value ?? "").trim().toLowerCase());
  return truthy ? "yes" : "no";
}

function select(id, options, value) {
  return h("select", { id, name: id },
    options.map(([v, label]) => h("option", { value: v, selected: v === value }, label)));
}

export function membersPanel(clusterId, { cluster, changed }) {
  const state = { filters: {}, sort: "index", desc: false, limit: 50, markers: [] };
  const rowsBox = h("div", { id: "members" });
  const pager = h("div", { id: "members-pager", class: "pager" });
  const error = h("p", { id: "member-error", class: "error", role: "alert" });
  const notice = h("p", { id: "member-notice", class: "notice", role: "status" });
  let total = null; // members of the cluster (the filters' own total is not counted)
  let lastPage = [];

  const say = (text, isError) => {
    error.textContent = isError ? text : "";
    notice.textContent = isError ? "" : text;
  };

  const path = () => `/v1/nodes${query({
    cluster_id: clusterId,
    limit: state.limit + 1, // one more tells whether a next page exists
    marker: state.markers.at(-1),
    sort: `${state.sort}:${state.desc ? "desc" : "asc"}${state.sort === "index" ? "" : ",index:asc"}`,
    ...state.filters,
  })}`;

  // Draws the page as soon as it arrives; the pager once the member count (a promise) is known.
  async function refresh(memberCount) {
    const nodes = (await get(path())).nodes;
    lastPage = nodes.slice(0, state.limit);
    fillIfChanged(rowsBox, lastPage, draw);
    total = await memberCount;
    const first = state.markers.length * state.limit + 1;
    const filtered = Object.keys(state.filters).length > 0;
    fillIfChanged(pager, { first, n: lastPage.length, more: nodes.length > state.limit, total, filtered }, drawPager);
  }

  function drawPager({ first, n, more, total: all, filtered }) {
    const range = n ? `Rows ${first}–${first + n - 1}` : "No rows";
    const of = filtered ? " matching the filters" : ` of ${all}`;
    return [
      h("button", { type: "button", id: "members-prev", class: "secondary small", disabled: state.markers.length === 0,
        onclick: () => { state.markers.pop(); changed(); } }, "← Previous"),
      h("span", { id: "members-range" }, `${range}${of}`),
      h("button", { type: "button", id: "members-next", class: "secondary small", disabled: !more,
        onclick: () => { state.markers.push(lastPage.at(-1).id); changed(); } }, "Next →"),
    ];
  }

  async function act(text, call) {
    say("", false);
    try {
      const answer = await call();
      say(text(answer), false);
      changed();
    } catch (failure) {
      if (!(failure instanceof ApiError)) throw failure;
      say(failure.message, true);
    }
  }

  const recover = (m) => act((a) => `Recovery of ${m.name} started: action ${a.action}.`,
    () => api("POST", `/v1/nodes/${encodeURIComponent(m.id)}/actions`, { recover: {} }));

  function deleteButton(m) {
    let armed = false;
    const button = h("button", {
      type: "button", class: "small danger", "aria-label": `Delete ${m.name}`,
      onclick: () => {
        if (!armed) {
          armed = true;
          button.textContent = "Confirm delete";
          return;
        }
        act(() => `Deletion of ${m.name} started.`, () => api("DELETE", `/v1/nodes/${encodeURIComponent(m.id)}`));
      },
    }, "Delete");
    return button;
  }

  function draw(rows) {
    return table(
      `${rows.length} members on this page`,
      ["Index#", "Name", "Status", "Health", "Marked by, why", "Zone / region", "Age", "Protected", "Deletion cost#", "Actions"],
      rows.map((m) => {
        const placement = (m.data && m.data.placement) || {};
        const marked = m.health === "CHECK_FAILED";
        return h("tr", { "data-node": m.name },
          h("td", { class: "num" }, String(m.index)),
          h("td", null, h("a", { href: `/ui/nodes/${encodeURIComponent(m.id)}` }, m.name)),
          h("td", { title: m.status_reason }, badge(m.status)),
          h("td", null, badge(m.health)),
          h("td", null, m.health_marked_by ? [h("span", { class: "mono" }, short(m.health_marked_by)), ` ${m.health_reason || ""}`, " ", time(m.health_marked_at)] : m.health_reason || "—"),
          h("td", null, `${placement.zone || "—"} / ${placement.region_name || "—"}`),
          h("td", null, time(m.created_at)),
          h("td", null, yesNo((m.metadata || {}).protected)),
          h("td", { class: "num" }, String((m.metadata || {}).deletion_cost ?? 0)),
          h("td", { class: "row-buttons" },
            h("button", {
              type: "button", class: "small",
              "aria-label": `${marked ? "Reset health of" : "Mark unhealthy:"} ${m.name}`,
              onclick: () => openMarkDialog(cluster(), m, !marked, changed),
            }, marked ? "Reset" : "Mark unhealthy"),
            h("button", { type: "button", class: "small secondary", "aria-label": `Recover ${m.name}`, onclick: () => recover(m) }, "Recover"),
            deleteButton(m)),
        );
      }),
      Object.keys(state.filters).length ? "No member matches these filters." : "This cluster has no members.",
    );
  }

  function filterForm() {
    const inputs = {
      status: select("filter-status", ["", ...constants().node_statuses].map((s) => [s, s || "any"]), ""),
      health: select("filter-health", ["", ...constants().health_statuses].map((s) => [s, s || "any"]), ""),
      zone: h("input", { id: "filter-zone", name: "zone", type: "text", size: 10 }),
      region: h("input", { id: "filter-region", name: "region", type: "text", size: 10 }),
      name: h("input", { id: "filter-name", name: "name", type: "text", size: 14 }),
    };
    const sort = select("members-sort", SORTS, state.sort);
    const dir = select("members-dir", [["asc", "ascending"], ["desc", "descending"]], "asc");
    const size = select("members-limit", PAGE_SIZES.map((n) => [String(n), String(n)]), String(state.limit));
    const labelled = (id, text, input) => h("label", { for: id }, text, input);
    return h("form", {
      class: "inline filters", id: "members-filters", novalidate: true,
      onsubmit: (event) => {
        event.preventDefault();
        state.filters = {};
        for (const key of FILTERS) {
          const value = inputs[key].value.trim();
          if (value) state.filters[key] = value;
        }
        state.sort = sort.value;
        state.desc = dir.value === "desc";
        state.limit = Number(size.value);
        state.markers = [];
        say("", false);
        changed();
      },
    },
    labelled("filter-status", "Status", inputs.status),
    labelled("filter-health", "Health", inputs.health),
    labelled("filter-zone", "Zone", inputs.zone),
    labelled("filter-region", "Region", inputs.region),
    labelled("filter-name", "Name", inputs.name),
    labelled("members-sort", "Sort by", sort),
    labelled("members-dir", "Order", dir),
    labelled("members-limit", "Rows", size),
    h("button", { type: "submit", id: "members-apply" }, "Show"));
  }

  const element = h("section", { "aria-labelledby": "members-h" },
    h("h2", { id: "members-h" }, "Members"),
    filterForm(), error, notice, rowsBox, pager);
  fill(rowsBox, h("p", null, "Loading…"));
  return { element, refresh };
}
