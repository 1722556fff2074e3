// Deletions in progress: tombstones with their age, the regions still holding copies,
// and the administrators' purge (DELETE /v1/deletions/<type>/<id>?force=true).

import { ApiError, actionEnded, api, get } from "../api.js";
import { badge, duration, fill, fillIfChanged, h, table } from "../dom.js";

export function deletionsView() {
  let list;
  let notice;
  let error;

  function say(text, isError) {
    error.textContent = isError ? text : "";
    notice.textContent = isError ? "" : text;
  }

  async function purge(item, button) {
    if (button.dataset.armed !== "yes") {
      button.dataset.armed = "yes";
      button.textContent = `Confirm purge of ${item.resource_type} ${item.resource_id.slice(0, 8)}`;
      return;
    }
    button.disabled = true;
    try {
      // The API hands the deletion to a DELETION_PURGE action (202); the page follows it.
      const answer = await api("DELETE", `/v1/deletions/${encodeURIComponent(item.resource_type)}/${encodeURIComponent(item.resource_id)}?force=true`);
      say(`Purging ${item.resource_type} ${item.resource_id}: action ${answer.deletion.action}…`, false);
      await refresh();
      const action = await actionEnded(answer.deletion.action);
      if (action.status === "SUCCEEDED") {
        say(`Purged ${item.resource_type} ${item.resource_id}: ${action.outputs.cleaned.join("; ")}.`, false);
      } else {
        say(`The purge of ${item.resource_type} ${item.resource_id} ended ${action.status}: ${action.status_reason}`, true);
      }
      await refresh();
    } catch (failure) {
      if (!(failure instanceof ApiError)) throw failure;
      say(failure.message, true);
      button.disabled = false;
    }
  }

  function draw(items) {
    return table(
      "Resources being deleted (tombstones), oldest first",
      ["Type", "Resource", "Project", "Age", "Status", "Reason", "Regions still holding copies", "Action", "Purge"],
      items.map((item) => h("tr", { "data-resource": item.resource_id },
        h("td", null, item.resource_type),
        h("td", { class: "mono" }, item.resource_id),
        h("td", null, item.project),
        h("td", null, h("time", { datetime: item.deleted_at }, duration(item.age))),
        h("td", null, badge(item.status)),
        h("td", null, item.reason || "—"),
        h("td", null, item.regions_with_copies === undefined ? h("span", { class: "muted" }, "no regions configured")
          : item.regions_with_copies.length ? item.regions_with_copies.join(", ") : "none"),
        h("td", { class: "mono" }, item.action_id || "—"),
        h("td", null, h("button", {
          type: "button",
          class: "small",
          "aria-label": `Purge the deletion of ${item.resource_type} ${item.resource_id}`,
          onclick: (event) => purge(item, event.currentTarget),
        }, "Purge")),
      )),
      "No deletion in progress.",
    );
  }

  async function refresh() {
    try {
      const answer = await get("/v1/deletions");
      // Ages grow every second: redraw on changes of anything else, and on whole minutes.
      const key = answer.deletions.map((d) => ({ ...d, age: Math.floor(d.age / 60) }));
      fillIfChanged(list, key, () => draw(answer.deletions));
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 403) {
        fill(list, h("p", { class: "error" }, `Only administrators see deletions: ${failure.message}`));
        return;
      }
      throw failure;
    }
  }

  return {
    title: "Deletions",
    mount(main) {
      list = h("div", { id: "deletions" }, h("p", null, "Loading…"));
      notice = h("p", { id: "purge-notice", class: "notice", role: "status" });
      error = h("p", { id: "purge-error", class: "error", role: "alert" });
      fill(main,
        h("h1", null, "Deletions in progress"),
        h("p", { class: "muted" }, "A tombstone keeps a resource hidden from regional agents until every copy is gone. A purge clears a deletion stuck longer than deletion_stuck_after."),
        notice, error, list);
    },
    refresh,
  };
}
