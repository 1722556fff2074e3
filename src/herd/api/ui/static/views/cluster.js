// One cluster: summary, members (mark unhealthy / reset), scale-in preview and run,
// size over time, waiting hooks and the action timeline. Every read and write is a /v1 call.

import { ApiError, CLUSTER_ACTIONS, api, get, query } from "../api.js";
import { sizeChart } from "../charts.js";
import { badge, epoch, fill, fillIfChanged, h, short, table, time } from "../dom.js";
import { openMarkDialog } from "./mark.js";
import { drawTimeline } from "./timeline.js";

const GROWS = new Set(["ACTIVE"]);

// Walk the member events back from today's size: creations added one, deletions took one.
export function sizeHistory(events, sizeNow) {
  const changes = events
    .filter((e) => e.otype === "NODE")
    .map((e) => ({ t: epoch(e.timestamp), d: delta(e) }))
    .filter((c) => c.d !== 0 && c.t !== null)
    .sort((a, b) => a.t - b.t);
  const times = [];
  const sizes = [];
  let size = sizeNow;
  for (let i = changes.length - 1; i >= 0; i -= 1) {
    times.unshift(changes[i].t);
    sizes.unshift(size);
    size -= changes[i].d;
  }
  if (changes.length) {
    times.unshift(changes[0].t - 1);
    sizes.unshift(size);
  }
  times.push(Date.now() / 1000);
  sizes.push(sizeNow);
  return { times, sizes };
}

function delta(event) {
  if (GROWS.has(event.status) && event.status_reason === "Creation succeeded") return 1;
  if (event.status === "DELETED" || event.status_reason === "Node left cluster") return -1;
  return 0;
}

function yesNo(value) {
  const truthy = ["1", "true", "yes", "on", "y", "t"].includes(String(value ?? "").trim().toLowerCase());
  return truthy ? "yes" : "no";
}

export function clusterView(clusterId) {
  const el = {};
  let cluster = null;
  let members = [];

  async function refresh() {
    const path = `/v1/clusters/${encodeURIComponent(clusterId)}`;
    const [one, nodes, actions, waiting, events, policies] = await Promise.all([
      get(path),
      get(`/v1/nodes${query({ cluster_id: clusterId, sort: "index:asc" })}`),
      get(`/v1/actions${query({ cluster_id: clusterId, sort: "created_at:desc", limit: 25, action: CLUSTER_ACTIONS })}`),
      get(`/v1/actions${query({ cluster_id: clusterId, status: "WAITING_LIFECYCLE_COMPLETION" })}`),
      get(`/v1/events${query({ cluster_id: clusterId, otype: "NODE", sort: "timestamp:desc", limit: 500 })}`),
      get(`${path}/policies`),
    ]);
    cluster = one.cluster;
    members = nodes.nodes;
    const names = {};
    for (const e of events.events) names[e.oid] = e.oname;
    for (const m of members) names[m.id] = m.name;
    document.title = `${cluster.name} · herd`;
    fillIfChanged(el.summary, { cluster, policies: policies.cluster_policies }, drawSummary);
    fillIfChanged(el.members, members, drawMembers);
    fillIfChanged(el.waiting, { actions: waiting.actions, names }, drawWaiting);
    fillIfChanged(el.timeline, { actions: actions.actions, names }, drawTimeline);
    const history = sizeHistory(events.events, members.length);
    fillIfChanged(el.chart, history.sizes.slice(0, -1).concat(history.times.slice(0, -1)), () => {
      const box = h("div", { class: "chart" });
      requestAnimationFrame(() => sizeChart(box, history.times, history.sizes,
        `Cluster size over time: ${members.length} members now, ${history.times.length - 2} changes shown`));
      return box;
    });
  }

  function drawSummary({ cluster: c, policies }) {
    return [
      h("h1", null, `Cluster ${c.name} `, badge(c.status)),
      h("p", null, c.status_reason),
      h("dl", { class: "facts" },
        h("dt", null, "Members / desired"), h("dd", { id: "member-count" }, `${c.nodes.length} / ${c.desired_capacity}`),
        h("dt", null, "Min – max"), h("dd", null, `${c.min_size} – ${c.max_size < 0 ? "∞" : c.max_size}`),
        h("dt", null, "Profile"), h("dd", null, c.profile_name || c.profile_id),
        h("dt", null, "Policies"), h("dd", null, policies.length
          ? policies.map((p) => `${p.policy_name} (${p.policy_type}, priority ${p.priority}${p.enabled ? "" : ", disabled"})`).join("; ")
          : "none"),
        h("dt", null, "Created"), h("dd", null, time(c.created_at)),
        h("dt", null, "Id"), h("dd", { class: "mono" }, c.id),
      ),
    ];
  }

  function drawMembers(rows) {
    return table(
      `${rows.length} members`,
      ["Index#", "Name", "Status", "Health", "Marked by, why", "Zone / region", "Age", "Protected", "Deletion cost#", "Health action"],
      rows.map((m) => {
        const placement = (m.data && m.data.placement) || {};
        const marked = m.health === "CHECK_FAILED";
        return h("tr", { "data-node": m.name },
          h("td", { class: "num" }, String(m.index)),
          h("td", null, m.name),
          h("td", { title: m.status_reason }, badge(m.status)),
          h("td", null, badge(m.health)),
          h("td", null, m.health_marked_by ? [h("span", { class: "mono" }, short(m.health_marked_by)), ` ${m.health_reason || ""}`, " ", time(m.health_marked_at)] : m.health_reason || "—"),
          h("td", null, `${placement.zone || "—"} / ${placement.region_name || "—"}`),
          h("td", null, time(m.created_at)),
          h("td", null, yesNo((m.metadata || {}).protected)),
          h("td", { class: "num" }, String((m.metadata || {}).deletion_cost ?? 0)),
          h("td", null, h("button", {
            type: "button",
            class: "small",
            "aria-label": `${marked ? "Reset health of" : "Mark unhealthy:"} ${m.name}`,
            onclick: () => openMarkDialog(cluster, m, !marked, refresh),
          }, marked ? "Reset" : "Mark unhealthy")),
        );
      }),
      "This cluster has no members.",
    );
  }

  function drawWaiting({ actions, names }) {
    return table(
      "Members whose removal waits for a lifecycle hook answer",
      ["Member", "Child action", "Waiting since"],
      actions.map((a) => h("tr", null,
        h("td", null, names[a.target] || short(a.target)),
        h("td", { class: "mono" }, a.id),
        h("td", null, time(a.created_at)))),
      "No lifecycle hook is waiting.",
    );
  }

  function scaleInForm() {
    const count = h("input", { id: "scale-count", name: "count", type: "text", inputmode: "numeric", size: 5, value: "1" });
    const error = h("p", { id: "scale-error", class: "error", role: "alert" });
    const notice = h("p", { id: "scale-notice", class: "notice", role: "status" });
    const result = h("div", { id: "preview-result", "aria-live": "polite" });
    const run = h("button", { type: "button", id: "scale-run", class: "danger", hidden: true }, "Scale in now");
    let previewed = null; // the previewed body with the seed the preview named
    const say = (text, isError) => {
      error.textContent = isError ? text : "";
      notice.textContent = isError ? "" : text;
    };
    const body = () => {
      const raw = count.value.trim();
      if (raw === "") return {};
      return { count: /^-?\d+$/.test(raw) ? Number(raw) : raw };
    };
    const form = h("form", {
      class: "inline",
      novalidate: true,
      onsubmit: async (event) => {
        event.preventDefault();
        say("", false);
        run.hidden = true;
        fill(result);
        try {
          const asked = body();
          const answer = await api("POST", `/v1/clusters/${encodeURIComponent(clusterId)}/actions`, { preview_scale_in: asked });
          // Running with the preview's seed removes exactly these members (while the cluster holds still).
          previewed = { ...asked, seed: answer.seed };
          fill(result, table(
            "Members a scale-in would remove now, in order",
            ["Rank#", "Member", "Status", "Health", "Why"],
            answer.victims.map((v, i) => h("tr", null,
              h("td", { class: "num" }, String(i + 1)), h("td", null, v.name),
              h("td", null, badge(v.status)), h("td", null, badge(v.health)), h("td", null, v.rule))),
            "No member would be removed.",
          ));
          run.hidden = false;
          run.textContent = `Scale in now (seed ${answer.seed})`;
        } catch (failure) {
          if (!(failure instanceof ApiError)) throw failure;
          say(failure.message, true);
        }
      },
    },
    h("label", { for: "scale-count" }, "Members to remove", count),
    h("button", { type: "submit", id: "scale-preview" }, "Preview scale-in"),
    run);
    run.addEventListener("click", async () => {
      say("", false);
      try {
        const answer = await api("POST", `/v1/clusters/${encodeURIComponent(clusterId)}/actions`, { scale_in: previewed || body() });
        say(`Scale-in started: action ${answer.action}.`, false);
        run.hidden = true;
        refresh();
      } catch (failure) {
        if (!(failure instanceof ApiError)) throw failure;
        say(failure.message, true);
      }
    });
    return h("section", { "aria-labelledby": "scale-h" },
      h("h2", { id: "scale-h" }, "Scale in"),
      h("p", { class: "muted" }, "Preview asks the attached policies which members they would remove now; nothing changes until you scale in."),
      form, error, notice, result);
  }

  return {
    title: "Cluster",
    mount(main) {
      el.summary = h("div", { id: "summary" }, h("p", null, "Loading…"));
      el.members = h("div", { id: "members" });
      el.chart = h("div", { id: "size-chart" });
      el.waiting = h("div", { id: "waiting-hooks" });
      el.timeline = h("div", { id: "timeline" });
      fill(main,
        h("p", null, h("a", { href: "/ui/" }, "← All clusters")),
        el.summary,
        h("section", { "aria-labelledby": "members-h" }, h("h2", { id: "members-h" }, "Members"), el.members),
        scaleInForm(),
        h("div", { class: "grid2" },
          h("section", { "aria-labelledby": "size-h" }, h("h2", { id: "size-h" }, "Size over time"), el.chart),
          h("section", { "aria-labelledby": "waiting-h" }, h("h2", { id: "waiting-h" }, "Waiting lifecycle hooks"), el.waiting)),
        h("section", { "aria-labelledby": "timeline-h" },
          h("h2", { id: "timeline-h" }, "Actions"),
          h("p", { class: "muted" }, "Newest first. Open an action to see its policy decisions: the victims and why each was ranked where it was, the hooks sent and answered, the grace period."),
          el.timeline),
      );
    },
    refresh,
  };
}
