// A cluster's receivers (GET /v1/receivers?cluster_id=..): each with its webhook URL (copy it),
// a trigger button (POST to the URL, as an alarm would) and delete; and a form creating one
// (POST /v1/receivers). The API's error texts show as they are.

import { ApiError, api, constants, get, query } from "../api.js";
import { fillIfChanged, h, table, time } from "../dom.js";

// The URL's path and query on this origin: the page may reach herd by another host name than
// the one the receiver's URL was made with, and the page may only call its own origin.
function local(url) {
  const parsed = new URL(url, location.href);
  return `${parsed.pathname}${parsed.search}`;
}

async function copy(text, input) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    input.select(); // no clipboard permission (plain http, a headless browser): select it
    document.execCommand("copy");
  }
}

export function receiversPanel(clusterId, changed) {
  const box = h("div", { id: "receivers" });
  const error = h("p", { id: "receiver-error", class: "error", role: "alert" });
  const notice = h("p", { id: "receiver-notice", class: "notice", role: "status" });
  const say = (text, isError) => {
    error.textContent = isError ? text : "";
    notice.textContent = isError ? "" : text;
  };
  const act = async (text, call) => {
    say("", false);
    try {
      say(text(await call()), false);
      refreshReceivers().catch(() => {});
      changed();
    } catch (failure) {
      if (!(failure instanceof ApiError)) throw failure;
      say(failure.message, true);
    }
  };

  let knownId = clusterId; // the list filters on the cluster's id (the page may name it)
  async function refreshReceivers(realId) {
    if (realId) knownId = realId;
    const { receivers } = await get(`/v1/receivers${query({ cluster_id: knownId, sort: "created_at:asc" })}`);
    fillIfChanged(box, receivers, draw);
  }

  function draw(receivers) {
    return table(
      "Receivers: URLs that start an action on this cluster",
      ["Name", "Action", "Params", "Webhook URL", "Created", ""],
      receivers.map((r) => {
        const url = (r.channel || {}).alarm_url || "";
        const input = h("input", { type: "text", readonly: true, size: 40, value: url, class: "mono", "aria-label": `Webhook URL of ${r.name}` });
        return h("tr", { "data-receiver": r.name },
          h("td", null, r.name),
          h("td", null, r.action),
          h("td", { class: "mono" }, JSON.stringify(r.params || {})),
          h("td", null, url ? input : h("span", { class: "muted" }, "not shown: rotate its secret")),
          h("td", null, time(r.created_at)),
          h("td", { class: "row-buttons" },
            h("button", { type: "button", class: "small", disabled: !url, "aria-label": `Copy the URL of ${r.name}`,
              onclick: () => copy(url, input).then(() => say(`Copied the URL of ${r.name}.`, false)) }, "Copy URL"),
            h("button", { type: "button", class: "small secondary", disabled: !url, "aria-label": `Trigger ${r.name}`,
              onclick: () => act((a) => `${r.name} triggered: action ${a.action}.`, () => api("POST", local(url))) }, "Trigger"),
            h("button", { type: "button", class: "small danger", "aria-label": `Delete receiver ${r.name}`,
              onclick: () => act(() => `Receiver ${r.name} deleted.`, () => api("DELETE", `/v1/receivers/${encodeURIComponent(r.id)}`)) }, "Delete")),
        );
      }),
      "No receiver for this cluster.",
    );
  }

  const name = h("input", { id: "receiver-name", type: "text", size: 14 });
  const action = h("select", { id: "receiver-action" }, constants().receiver_action_names.map((a) => h("option", { value: a }, a)));
  const params = h("input", { id: "receiver-params", type: "text", size: 20, placeholder: '{"count": 1}', class: "mono" });
  const form = h("form", {
    class: "inline", id: "receiver-form", novalidate: true,
    onsubmit: (event) => {
      event.preventDefault();
      let parsed = {};
      if (params.value.trim()) {
        try {
          parsed = JSON.parse(params.value);
        } catch {
          say("Params must be a JSON object, e.g. {\"count\": 1}.", true);
          return;
        }
      }
      act((answer) => `Receiver ${answer.receiver.name} created.`, () => api("POST", "/v1/receivers", {
        receiver: { name: name.value.trim(), type: "webhook", cluster_id: clusterId, action: action.value, params: parsed },
      }));
    },
  },
  h("label", { for: "receiver-name" }, "Name", name),
  h("label", { for: "receiver-action" }, "Action", action),
  h("label", { for: "receiver-params" }, "Params (JSON)", params),
  h("button", { type: "submit", id: "receiver-create" }, "Create receiver"));

  const element = h("section", { "aria-labelledby": "receivers-h" },
    h("h2", { id: "receivers-h" }, "Receivers"),
    h("p", { class: "muted" }, "A receiver's URL needs no token: an alarm (or Alertmanager, at its alertmanager_url) posts to it and the action runs."),
    box, form, error, notice);
  return { element, refresh: refreshReceivers };
}
