// The mark-unhealthy / reset dialog of a member row: PATCH /v1/clusters/<c>/nodes/<n>.
// The API's own 400/409 texts are shown as they are.

import { ApiError, api } from "../api.js";

const dialog = document.getElementById("mark-dialog");
const form = document.getElementById("mark-form");
const title = document.getElementById("mark-title");
const help = document.getElementById("mark-help");
const reason = document.getElementById("mark-reason");
const error = document.getElementById("mark-error");
const submit = document.getElementById("mark-submit");
let pending = null;

export function openMarkDialog(cluster, member, markUnhealthy, done) {
  pending = { cluster, member, markUnhealthy, done };
  title.textContent = markUnhealthy ? `Mark ${member.name} unhealthy` : `Reset the health of ${member.name}`;
  help.textContent = markUnhealthy
    ? "An unhealthy member is the first to go in any scale-in, and replace_unhealthy replaces it."
    : "The member goes back to CHECK_COMPLETE.";
  submit.textContent = markUnhealthy ? "Mark unhealthy" : "Reset health";
  reason.value = "";
  error.textContent = "";
  dialog.showModal();
  reason.focus();
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!pending) return;
  const { cluster, member, markUnhealthy, done } = pending;
  error.textContent = "";
  submit.disabled = true;
  try {
    const body = { mark_unhealthy: markUnhealthy };
    if (reason.value.trim()) body.resource_status_reason = reason.value.trim();
    await api("PATCH", `/v1/clusters/${encodeURIComponent(cluster.id)}/nodes/${encodeURIComponent(member.id)}`, body);
    dialog.close();
    pending = null;
    done();
  } catch (failure) {
    if (!(failure instanceof ApiError)) throw failure;
    error.textContent = failure.message;
  } finally {
    submit.disabled = false;
  }
});

document.getElementById("mark-cancel").addEventListener("click", () => {
  pending = null;
  dialog.close();
});
