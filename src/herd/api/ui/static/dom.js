// Small DOM helpers: elements are built with textContent, never from HTML strings.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

export function fill(container, ...children) {
  container.replaceChildren();
  append(container, children);
}

// Redraw a section only when its data changed, so live updates keep focus and open rows.
const drawn = new WeakMap();
export function fillIfChanged(container, data, draw) {
  const key = JSON.stringify(data);
  if (drawn.get(container) === key) return false;
  drawn.set(container, key);
  fill(container, draw(data));
  return true;
}

export function forget(container) {
  drawn.delete(container);
}

const TONE = {
  ACTIVE: "ok", SUCCEEDED: "ok", HEALTHY: "ok", CHECK_COMPLETE: "ok", DELETED: "ok", SENT: "ok",
  CONTINUE: "ok", TIMEOUT_CONTINUE: "warn", UNDELIVERED_CONTINUE: "warn",
  ERROR: "bad", FAILED: "bad", CHECK_FAILED: "warn", WARNING: "warn", CANCELLED: "warn",
  ABANDON: "warn", TIMEOUT_ABANDON: "warn", UNDELIVERED_ABANDON: "warn",
  RUNNING: "info", RESIZING: "info", CREATING: "info", DELETING: "info", UPDATING: "info",
  READY: "info", WAITING: "info", WAITING_LIFECYCLE_COMPLETION: "info", RECOVERING: "info",
  CHECKING: "info",
};

export function badge(text) {
  const value = text === null || text === undefined || text === "" ? "—" : String(text);
  return h("span", { class: `badge ${TONE[value] || ""}` }, value);
}

export function epoch(value) {
  if (value === null || value === undefined || value === "") return null;
  if (typeof value === "number") return value;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed / 1000;
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return "—";
  const s = Math.max(0, seconds);
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.round((s % 86400) / 3600)} h`;
}

export function ago(value) {
  const when = epoch(value);
  if (when === null) return "—";
  return `${duration(Date.now() / 1000 - when)} ago`;
}

export function time(value) {
  const when = epoch(value);
  if (when === null) return h("span", { class: "muted" }, "—");
  const iso = new Date(when * 1000).toISOString();
  return h("time", { datetime: iso, title: iso }, ago(when));
}

export function short(id) {
  return id ? String(id).slice(0, 8) : "—";
}

export function table(caption, headers, rows, empty = "Nothing to show.") {
  if (!rows.length) return h("p", { class: "muted" }, empty);
  return h(
    "table",
    null,
    h("caption", null, caption),
    h("thead", null, h("tr", null, headers.map((name) => {
      const numeric = name.endsWith("#");
      return h("th", { scope: "col", class: numeric ? "num" : null }, numeric ? name.slice(0, -1) : name);
    }))),
    h("tbody", null, rows),
  );
}
