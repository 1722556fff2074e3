// Forms acting on one cluster through POST /v1/clusters/<id>/actions and DELETE /v1/clusters/<id>:
// scale out, resize, attach and detach a policy, delete the cluster. Each shows the API's own
// error text as it is, and the action it started.

import { ApiError, api, constants, get } from "../api.js";
import { h } from "../dom.js";

// The server's adjustment types, each shown as words (EXACT_CAPACITY: "exact capacity").
const adjustments = () => constants().adjustment_types.map((t) => [t, t.toLowerCase().replaceAll("_", " ")]);

// A number when the text is an integer, else the text itself: the API names what is wrong.
function value(raw) {
  const text = raw.trim();
  if (text === "") return undefined;
  return /^-?\d+$/.test(text) ? Number(text) : text;
}

function messages(prefix) {
  const error = h("p", { id: `${prefix}-error`, class: "error", role: "alert" });
  const notice = h("p", { id: `${prefix}-notice`, class: "notice", role: "status" });
  const say = (text, isError) => {
    error.textContent = isError ? text : "";
    notice.textContent = isError ? "" : text;
  };
  return { error, notice, say };
}

// A form whose submit posts `body()` and reports the action it started.
function actionForm(prefix, title, help, fields, submitText, send, changed) {
  const { error, notice, say } = messages(prefix);
  const form = h("form", {
    class: "inline", id: `${prefix}-form`, novalidate: true,
    onsubmit: async (event) => {
      event.preventDefault();
      say("", false);
      try {
        const answer = await send();
        say(`${title} started: action ${answer.action}.`, false);
        changed();
      } catch (failure) {
        if (!(failure instanceof ApiError)) throw failure;
        say(failure.message, true);
      }
    },
  }, fields, h("button", { type: "submit", id: `${prefix}-submit` }, submitText));
  return h("section", { "aria-labelledby": `${prefix}-h` },
    h("h3", { id: `${prefix}-h` }, title), h("p", { class: "muted" }, help), form, error, notice);
}

export function clusterForms(clusterId, changed) {
  const base = `/v1/clusters/${encodeURIComponent(clusterId)}`;
  const post = (body) => api("POST", `${base}/actions`, body);

  const outCount = h("input", { id: "scale-out-count", type: "text", inputmode: "numeric", size: 5, value: "1" });
  const scaleOut = actionForm("scale-out", "Scale-out",
    "Adds members (the scaling and placement policies attached decide how many and where).",
    h("label", { for: "scale-out-count" }, "Members to add", outCount), "Scale out",
    () => {
      const count = value(outCount.value);
      return post({ scale_out: count === undefined ? {} : { count } });
    }, changed);

  const type = h("select", { id: "resize-type" }, adjustments().map(([v, t]) => h("option", { value: v }, t)));
  const number = h("input", { id: "resize-number", type: "text", size: 6 });
  const min = h("input", { id: "resize-min", type: "text", size: 5 });
  const max = h("input", { id: "resize-max", type: "text", size: 5 });
  const strict = h("input", { id: "resize-strict", type: "checkbox", checked: true });
  const resize = actionForm("resize", "Resize",
    "Sets the capacity (or changes it by a number or a percentage) and, if given, the min and max sizes.",
    [
      h("label", { for: "resize-type" }, "Adjustment", type),
      h("label", { for: "resize-number" }, "Number", number),
      h("label", { for: "resize-min" }, "Min size", min),
      h("label", { for: "resize-max" }, "Max size", max),
      h("label", { for: "resize-strict" }, "Strict", strict),
    ], "Resize",
    () => {
      const body = { strict: strict.checked };
      const n = value(number.value);
      if (n !== undefined) Object.assign(body, { adjustment_type: type.value, number: n });
      if (value(min.value) !== undefined) body.min_size = value(min.value);
      if (value(max.value) !== undefined) body.max_size = value(max.value);
      return post({ resize: body });
    }, changed);

  const policy = h("input", { id: "policy-id", type: "text", size: 24, list: "policy-names" });
  const names = h("datalist", { id: "policy-names" });
  get("/v1/policies").then(({ policies }) => {
    names.replaceChildren(...policies.map((p) => h("option", { value: p.name }, p.type)));
  }).catch(() => {});
  const { error, notice, say } = messages("policy");
  const policyAction = (key) => async () => {
    say("", false);
    try {
      const answer = await post({ [key]: { policy_id: policy.value.trim() } });
      say(`${key === "policy_attach" ? "Attach" : "Detach"} started: action ${answer.action}.`, false);
      changed();
    } catch (failure) {
      if (!(failure instanceof ApiError)) throw failure;
      say(failure.message, true);
    }
  };
  const policies = h("section", { "aria-labelledby": "policy-h" },
    h("h3", { id: "policy-h" }, "Policies"),
    h("p", { class: "muted" }, "Attach or detach a policy by name or id."),
    h("div", { class: "inline" },
      h("label", { for: "policy-id" }, "Policy", policy), names,
      h("button", { type: "button", id: "policy-attach", onclick: policyAction("policy_attach") }, "Attach"),
      h("button", { type: "button", id: "policy-detach", class: "secondary", onclick: policyAction("policy_detach") }, "Detach")),
    error, notice);

  const gone = messages("delete-cluster");
  let armed = false;
  const deleteButton = h("button", {
    type: "button", id: "delete-cluster", class: "danger",
    onclick: async () => {
      if (!armed) {
        armed = true;
        deleteButton.textContent = "Confirm: delete this cluster";
        return;
      }
      gone.say("", false);
      try {
        await api("DELETE", base);
        gone.say("Deletion started.", false);
        changed();
      } catch (failure) {
        if (!(failure instanceof ApiError)) throw failure;
        gone.say(failure.message, true);
      }
    },
  }, "Delete cluster");
  const remove = h("section", { "aria-labelledby": "delete-cluster-h" },
    h("h3", { id: "delete-cluster-h" }, "Delete"),
    h("p", { class: "muted" }, "Deletes the cluster and its members (detach its policies first). Two clicks."),
    deleteButton, gone.error, gone.notice);

  return h("section", { "aria-labelledby": "act-h" },
    h("h2", { id: "act-h" }, "Act"),
    h("div", { class: "forms" }, scaleOut, resize, policies, remove));
}
