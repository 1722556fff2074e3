// Clusters: name, status, members against desired (with min/max), policies, last action; and a
// form creating one (POST /v1/clusters, the API's error texts shown as they are).

import { ApiError, api, constants, get, query } from "../api.js";
import { badge, fill, fillIfChanged, h, table, time } from "../dom.js";

export function clustersView() {
  let list;
  return {
    title: "Clusters",
    mount(main) {
      list = h("div", { id: "clusters" }, h("p", null, "Loading…"));
      fill(main, h("h1", null, "Clusters"), list, createForm(() => this.refresh()));
    },
    async refresh() {
      const [clusters, policies, actions] = await Promise.all([
        get(`/v1/clusters${query({ show_nodes: false })}`),
        get("/v1/policies"),
        get(`/v1/actions${query({ sort: "created_at:desc", limit: 200, action: constants().cluster_action_names, summary: true })}`),
      ]);
      const policyNames = Object.fromEntries(policies.policies.map((p) => [p.id, p.name]));
      const last = {};
      for (const action of actions.actions) {
        if (action.cluster_id && !last[action.cluster_id]) last[action.cluster_id] = action;
      }
      const rows = clusters.clusters.map((c) => ({
        id: c.id, name: c.name, status: c.status, reason: c.status_reason,
        members: c.node_count, desired: c.desired_capacity, min: c.min_size, max: c.max_size,
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

function createForm(changed) {
  const field = (id, label, attrs = {}) => {
    const input = h("input", { id, name: id, type: "text", size: 8, ...attrs });
    return [input, h("label", { for: id }, label, input)];
  };
  const [name, nameLabel] = field("create-name", "Name", { size: 16 });
  const profile = h("select", { id: "create-profile", name: "profile" });
  const [desired, desiredLabel] = field("create-desired", "Desired capacity", { value: "1" });
  const [min, minLabel] = field("create-min", "Min size");
  const [max, maxLabel] = field("create-max", "Max size");
  const error = h("p", { id: "create-error", class: "error", role: "alert" });
  const notice = h("p", { id: "create-notice", class: "notice", role: "status" });
  get("/v1/profiles").then(({ profiles }) => {
    profile.replaceChildren(...profiles.map((p) => h("option", { value: p.id }, `${p.name} (${p.type})`)));
  }).catch(() => {});
  const number = (input) => {
    const text = input.value.trim();
    if (text === "") return undefined;
    return /^-?\d+$/.test(text) ? Number(text) : text;
  };
  const form = h("form", {
    class: "inline", id: "create-form", novalidate: true,
    onsubmit: async (event) => {
      event.preventDefault();
      error.textContent = "";
      notice.textContent = "";
      const body = { name: name.value.trim(), profile_id: profile.value };
      for (const [key, input] of [["desired_capacity", desired], ["min_size", min], ["max_size", max]]) {
        if (number(input) !== undefined) body[key] = number(input);
      }
      try {
        const answer = await api("POST", "/v1/clusters", { cluster: body });
        notice.textContent = `Cluster ${answer.cluster.name} is being created.`;
        changed();
      } catch (failure) {
        if (!(failure instanceof ApiError)) throw failure;
        error.textContent = failure.message;
      }
    },
  }, nameLabel, h("label", { for: "create-profile" }, "Profile", profile), desiredLabel, minLabel, maxLabel,
  h("button", { type: "submit", id: "create-submit" }, "Create cluster"));
  return h("section", { "aria-labelledby": "create-h" }, h("h2", { id: "create-h" }, "Create a cluster"), form, error, notice);
}
