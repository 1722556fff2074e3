// One cluster: summary, members (a page at a time, filtered and sorted by the API; mark, reset,
// recover, delete), forms that act on it (scale out, resize, policies, delete, scale-in preview
// and run), size over time (the stored size history), waiting hooks and the action timeline.
// Every read and write is a /v1 call; polled reads send If-None-Match (api.js). Actions are read
// with summary=true: a creation of 100,000 members would otherwise ship 200,000 ids.

import { ApiError, api, constants, get, query } from "../api.js";
import { sizeChart } from "../charts.js";
import { badge, epoch, fill, fillIfChanged, h, short, table, time } from "../dom.js";
import { membersPanel } from "./members.js";
import { receiversPanel } from "./receivers.js";
import { clusterForms } from "./sizing.js";
import { drawTimeline } from "./timeline.js";

// The stored size points as a step line that ends now.
export function sizeHistory(points, sizeNow) {
  const times = points.map((p) => epoch(p.at));
  const sizes = points.map((p) => p.members);
  times.push(Date.now() / 1000);
  sizes.push(sizeNow);
  return { times, sizes };
}

// Names of the members the shown actions name (victims, added, removed, waiting): the newest
// NODE events of those ids (one request, at most NAMED ids), since removed members are gone.
const NAMED = 50;
async function memberNames(actions) {
  const names = {};
  const wanted = new Set();
  for (const a of actions) {
    const out = a.outputs || {};
    for (const [id, hook] of Object.entries(out.lifecycle_hooks || {})) names[id] = hook.node_name;
    const ids = [...((out.shrink || {}).victims || []), ...(out.nodes_removed || []),
      ...(out.nodes_kept_by_hook || []), ...(out.nodes_added || [])];
    if (a.action === "NODE_DELETE" || a.status === "WAITING_LIFECYCLE_COMPLETION") ids.push(a.target);
    for (const id of ids) if (!names[id] && wanted.size < NAMED) wanted.add(id);
  }
  if (!wanted.size) return names;
  const { events } = await get(`/v1/events${query({ otype: "NODE", oid: [...wanted].sort(), sort: "timestamp:desc", limit: 4 * NAMED })}`);
  for (const e of events) if (!names[e.oid] && e.oname) names[e.oid] = e.oname;
  return names;
}

// The waiting hooks shown (the oldest first); the count says when there are more.
const WAITING = 200;

export function clusterView(clusterId) {
  const el = {};
  let cluster = null;
  const changed = () => refresh().catch(() => {});
  const members = membersPanel(clusterId, { cluster: () => cluster, changed });
  const receivers = receiversPanel(clusterId, changed);

  async function refresh() {
    const path = `/v1/clusters/${encodeURIComponent(clusterId)}`;
    // The member page is asked for at once (the API resolves a name or short id itself), so
    // the first rows do not wait for the rest of the page.
    const summary = get(`${path}${query({ show_nodes: false })}`);
    const count = summary.then((one) => one.cluster.node_count);
    const rows = members.refresh(count);
    // Both are awaited below, or moot for a missing cluster: never "uncaught".
    count.catch(() => {});
    rows.catch(() => {});
    let one;
    try {
      one = await summary;
    } catch (failure) {
      if (!(failure instanceof ApiError) || failure.status !== 404) throw failure;
      document.title = "Cluster not found · herd";
      fillIfChanged(el.summary, failure.message, (text) => [
        h("h1", { id: "not-found" }, "Cluster not found"), h("p", null, text)]);
      el.rest.hidden = true;
      return;
    }
    el.rest.hidden = false;
    cluster = one.cluster;
    const [actions, waiting, sizes, policies] = await Promise.all([
      get(`/v1/actions${query({ cluster_id: cluster.id, sort: "created_at:desc", limit: 25, action: constants().cluster_action_names, summary: true })}`),
      get(`/v1/actions${query({ cluster_id: cluster.id, status: "WAITING_LIFECYCLE_COMPLETION", limit: WAITING, summary: true })}`),
      get(`${path}/size-history`),
      get(`${path}/policies`),
      rows,
      receivers.refresh(cluster.id),
    ]);
    const names = await memberNames([...actions.actions, ...waiting.actions]);
    document.title = `${cluster.name} · herd`;
    fillIfChanged(el.summary, { cluster, policies: policies.cluster_policies }, drawSummary);
    fillIfChanged(el.waiting, { actions: waiting.actions, names }, drawWaiting);
    fillIfChanged(el.timeline, { actions: actions.actions, names }, drawTimeline);
    const history = sizeHistory(sizes.size_history, cluster.node_count);
    fillIfChanged(el.chart, [sizes.size_history, cluster.node_count, cluster.desired_capacity], () => {
      const box = h("div", { class: "chart" });
      requestAnimationFrame(() => sizeChart(box, history.times, history.sizes,
        `Cluster size over time: ${cluster.node_count} members now, desired ${cluster.desired_capacity}, ${sizes.size_history.length} changes stored`));
      return box;
    });
  }

  function drawSummary({ cluster: c, policies }) {
    return [
      h("h1", null, `Cluster ${c.name} `, badge(c.status)),
      h("p", null, c.status_reason),
      h("dl", { class: "facts" },
        h("dt", null, "Members / desired"), h("dd", { id: "member-count" }, `${c.node_count} / ${c.desired_capacity}`),
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

  function drawWaiting({ actions, names }) {
    return table(
      actions.length < WAITING
        ? "Members whose removal waits for a lifecycle hook answer"
        : `The first ${WAITING} members whose removal waits for a lifecycle hook answer`,
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
      el.chart = h("div", { id: "size-chart" });
      el.waiting = h("div", { id: "waiting-hooks" });
      el.timeline = h("div", { id: "timeline" });
      el.rest = h("div", { id: "cluster-rest" },
        members.element,
        clusterForms(clusterId, changed),
        scaleInForm(),
        receivers.element,
        h("div", { class: "grid2" },
          h("section", { "aria-labelledby": "size-h" }, h("h2", { id: "size-h" }, "Size over time"), el.chart),
          h("section", { "aria-labelledby": "waiting-h" }, h("h2", { id: "waiting-h" }, "Waiting lifecycle hooks"), el.waiting)),
        h("section", { "aria-labelledby": "timeline-h" },
          h("h2", { id: "timeline-h" }, "Actions"),
          h("p", { class: "muted" }, "Newest first. Open an action to see its policy decisions: the victims and why each was ranked where it was, the hooks sent and answered, the grace period, and the request that started it."),
          el.timeline));
      fill(main, h("p", null, h("a", { href: "/ui/" }, "← All clusters")), el.summary, el.rest);
    },
    refresh,
  };
}
