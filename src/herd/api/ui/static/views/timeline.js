// The action timeline of one cluster: each action with its policy decisions, hooks and grace.

import { badge, duration, h, short, table, time } from "../dom.js";

// Actions come summarised (summary=true): a long list keeps its first items and
// `truncated` has its full length, which the captions say.
function shown(action, path, what, showing) {
  const total = (action.truncated || {})[path];
  return total === undefined ? what : `${what} (the first ${showing} of ${total.toLocaleString("en")})`;
}

function victimsTable(action, names) {
  // The engine stores its shrink decision as {victims: [ids], rules: [rule of each]}.
  const shrink = (action.outputs && action.outputs.shrink) || {};
  const victims = (shrink.victims || []).map((id, i) => ({ node_id: id, rule: (shrink.rules || [])[i] || "" }));
  if (!victims.length) return null;
  const removed = new Set((action.outputs && action.outputs.nodes_removed) || []);
  const kept = new Set((action.outputs && action.outputs.nodes_kept_by_hook) || []);
  return table(
    shown(action, "outputs.shrink.victims", "Victims, in the order they were ranked, and why", victims.length),
    ["Rank#", "Member", "Why it was ranked there", "Outcome"],
    victims.map((v, i) =>
      h("tr", null,
        h("td", { class: "num" }, String(i + 1)),
        h("td", null, names[v.node_id] || short(v.node_id)),
        h("td", null, v.rule),
        h("td", null, removed.has(v.node_id) ? "removed" : kept.has(v.node_id) ? "kept by hook" : "—"),
      )),
  );
}

function hooksTable(action, names) {
  const hooks = (action.outputs && action.outputs.lifecycle_hooks) || {};
  const entries = Object.entries(hooks);
  if (!entries.length) return null;
  return table(
    shown(action, "outputs.lifecycle_hooks", "Lifecycle hooks sent and answered", entries.length),
    ["Member", "Sent to", "Delivered", "Answer", "Waited"],
    entries.map(([nodeId, hook]) =>
      h("tr", null,
        h("td", null, hook.node_name || names[nodeId] || short(nodeId)),
        h("td", { class: "mono" }, hook.destination || "—"),
        h("td", null, hook.delivered === false ? [badge("FAILED"), " ", hook.error || ""] : badge("SENT")),
        h("td", null, hook.result ? badge(hook.result) : badge("WAITING")),
        h("td", null, hook.waited !== undefined ? duration(hook.waited) : "—"),
      )),
  );
}

function decisions(action) {
  const data = action.data || {};
  const deletion = data.deletion || {};
  const facts = [];
  const add = (term, value) => facts.push(h("dt", null, term), h("dd", null, value));
  if (data.reason) add("Policy check", `${data.status || ""} ${data.reason}`.trim());
  if (deletion.count !== undefined) add("Victims decided", String(deletion.count));
  if (deletion.zones) add("Per zone", JSON.stringify(deletion.zones));
  if (deletion.regions) add("Per region", JSON.stringify(deletion.regions));
  if (deletion.destroy_after_deletion !== undefined) {
    add("Removal", deletion.destroy_after_deletion ? "destroy" : "leave as orphan");
  }
  if (deletion.grace_period !== undefined) {
    const waited = action.outputs && action.outputs.grace_period_waited;
    add("Grace period", `${deletion.grace_period} s configured, ${waited !== undefined ? `${waited} s waited` : "not waited"}`);
  }
  if (data.hooks && data.hooks.type) {
    add("Lifecycle hook", `${data.hooks.type}, timeout ${data.hooks.timeout} s, default ${data.hooks.default_result || "CONTINUE"}`);
  }
  if (data.creation && data.creation.count !== undefined) add("Members to create", String(data.creation.count));
  return facts.length ? h("dl", { class: "facts" }, facts) : null;
}

function memberList(action, label, key, names) {
  const ids = action.outputs && action.outputs[key];
  if (!ids || !ids.length) return null;
  return h("p", { "data-list": key }, h("strong", null, `${shown(action, `outputs.${key}`, label, ids.length)}: `),
    ids.map((id) => names[id] || short(id)).join(", "));
}

// Which actions the reader opened, so a live update does not fold them again.
const opened = new Set();

export function drawTimeline({ actions, names }) {
  if (!actions.length) return h("p", { class: "muted" }, "No action yet.");
  return h("ul", { class: "timeline" },
    actions.map((a) => {
      const took = a.end_time && a.start_time ? duration(a.end_time - a.start_time) : a.start_time ? "running" : "queued";
      return h("li", { "data-action": a.action, "data-status": a.status },
        h("details", {
          open: opened.has(a.id),
          ontoggle: (event) => (event.target.open ? opened.add(a.id) : opened.delete(a.id)),
        },
          h("summary", null, h("strong", null, a.action), " ", badge(a.status), h("span", { class: "when" }, time(a.created_at), ` · ${took}`)),
          h("p", null, a.status_reason || ""),
          h("p", { class: "muted mono" }, "action ", h("a", { href: `/ui/actions/${encodeURIComponent(a.id)}` }, a.id), a.request_id ? ` · request ${a.request_id}` : "", Object.keys(a.inputs || {}).length ? ` · inputs ${JSON.stringify(a.inputs)}` : ""),
          decisions(a),
          victimsTable(a, names),
          hooksTable(a, names),
          memberList(a, "Removed", "nodes_removed", names),
          memberList(a, "Kept by their hook", "nodes_kept_by_hook", names),
          memberList(a, "Added", "nodes_added", names),
        ));
    }));
}
