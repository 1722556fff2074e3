// Relocation: paste or upload a Ganeti iallocator request and see herd's plan
// (POST /v1/relocation-plans): moved / failed per instance, every host's memory and disk
// before and after, and the jobs with their dependencies.

import { ApiError, api } from "../api.js";
import { beforeAfterBars } from "../charts.js";
import { badge, fill, h, table } from "../dom.js";

function mib(value) {
  return `${Math.round(value).toLocaleString("en")} MiB`;
}

function drawPlan(plan) {
  const hosts = plan.hosts;
  const memory = h("div", { class: "chart", id: "memory-chart" });
  const disk = h("div", { class: "chart", id: "disk-chart" });
  requestAnimationFrame(() => {
    const names = hosts.map((x) => x.name);
    beforeAfterBars(memory, names, hosts.map((x) => x.memory_total - x.memory_free_before),
      hosts.map((x) => x.memory_total - x.memory_free_after), "MiB", "Memory used per host, before and after the plan");
    beforeAfterBars(disk, names, hosts.map((x) => x.disk_total - x.disk_free_before),
      hosts.map((x) => x.disk_total - x.disk_free_after), "MiB", "Disk used per host, before and after the plan");
  });
  const check = plan.check;
  return [
    h("h2", { id: "plan-h" }, "Plan"),
    h("p", { id: "plan-info" }, badge(plan.success ? "SUCCEEDED" : "FAILED"), " ", plan.info),
    h("p", null, `Answer check: ${check.valid ? "valid" : "INVALID"}; moved ${check.moved}, failed ${check.failed}; cluster score ${check.score_before.toFixed(4)} → ${check.score_after.toFixed(4)} (lower is better).`),
    check.errors.length ? h("ul", { class: "error" }, check.errors.map((e) => h("li", null, e))) : null,
    check.warnings.length ? h("ul", null, check.warnings.map((w) => h("li", null, `warning: ${w}`))) : null,
    h("h3", null, "Instances"),
    table("Each requested instance: moved or failed", ["Instance", "Template", "From", "To", "Group", "Outcome"],
      plan.instances.map((row) => h("tr", { "data-instance": row.instance },
        h("td", null, row.instance), h("td", null, row.template), h("td", null, row.source),
        h("td", null, row.target), h("td", null, row.group),
        h("td", null, row.outcome.startsWith("failed") ? h("span", { class: "error" }, row.outcome) : badge("moved"))))),
    h("div", { class: "grid2" },
      h("section", null, h("h3", null, "Memory used per host"), memory),
      h("section", null, h("h3", null, "Disk used per host"), disk)),
    table("Hosts before and after", ["Host", "Group", "Memory free before", "Memory free after", "Disk free before", "Disk free after"],
      hosts.map((x) => h("tr", null, h("td", null, x.name + (x.offline ? " (offline)" : "")), h("td", null, x.group),
        h("td", { class: "num" }, mib(x.memory_free_before)), h("td", { class: "num" }, mib(x.memory_free_after)),
        h("td", { class: "num" }, mib(x.disk_free_before)), h("td", { class: "num" }, mib(x.disk_free_after))))),
    h("h3", null, "Jobs"),
    table("Jobs Ganeti runs; a job starts once the jobs it waits for have finished", ["Job#", "Instance", "Opcodes", "Waits for jobs"],
      plan.jobs.map((job) => h("tr", { "data-job": String(job.index) },
        h("td", { class: "num" }, String(job.index)), h("td", null, job.instance),
        h("td", null, job.opcodes.map((op) => `${op.op.replace("OP_INSTANCE_", "").toLowerCase()}${op.node ? ` → ${op.node}` : ""}`).join(", ")),
        h("td", null, job.depends_on.length ? job.depends_on.join(", ") : "none"))),
      "No job: nothing moves."),
  ];
}

export function relocationView() {
  return {
    title: "Relocation",
    live: false,
    mount(main) {
      const text = h("textarea", { id: "reloc-request", class: "code", rows: 12, spellcheck: "false" });
      const file = h("input", { id: "reloc-file", type: "file", accept: ".json,application/json" });
      const error = h("p", { id: "reloc-error", class: "error", role: "alert" });
      const result = h("div", { id: "plan", "aria-live": "polite" });
      file.addEventListener("change", async () => {
        if (file.files && file.files[0]) text.value = await file.files[0].text();
      });
      const form = h("form", {
        novalidate: true,
        onsubmit: async (event) => {
          event.preventDefault();
          error.textContent = "";
          fill(result);
          try {
            const answer = await api("POST", "/v1/relocation-plans", text.value);
            fill(result, drawPlan(answer.plan));
          } catch (failure) {
            if (!(failure instanceof ApiError)) throw failure;
            error.textContent = failure.message;
          }
        },
      },
      h("p", null, h("label", { for: "reloc-request" }, "iallocator request (the JSON Ganeti writes for its allocator)")),
      text,
      h("p", null, h("label", { for: "reloc-file" }, "or upload a request file "), file),
      h("button", { type: "submit", id: "reloc-plan" }, "Plan"));
      fill(main,
        h("h1", null, "Relocation"),
        h("p", { class: "muted" }, "Change-group and node-evacuate requests are planned by herd's iallocator (the same as herd iallocator, usable in place of hail); nothing is stored or run."),
        form, error, result);
    },
    async refresh() {},
  };
}
