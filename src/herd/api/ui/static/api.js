// The REST API as the dashboard calls it: the same endpoints, auth and error texts as any client.

const TOKEN_KEY = "herd.token";

export class ApiError extends Error {
  constructor(status, message, type) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

const listeners = new Set();
export function onUnauthorized(callback) {
  listeners.add(callback);
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// The server's names and the API version it speaks (GET /v1/constants, public as GET /v1 is),
// read once when the dashboard starts: app.js awaits loadConstants() before drawing a page, so
// the views read them with constants() and carry no copies that drift from the server.
let server = null;

export async function loadConstants() {
  if (server) return server;
  const response = await fetch("/v1/constants", { headers: { Accept: "application/json" }, cache: "no-store" });
  if (!response.ok) throw new ApiError(response.status, `GET /v1/constants answered ${response.status}`, "");
  server = (await response.json()).constants;
  return server;
}

export function constants() {
  if (!server) throw new Error("loadConstants() has not run");
  return server;
}

export async function api(method, path, body) {
  const version = `clustering ${(await loadConstants()).api.max_version}`;
  const headers = { "OpenStack-API-Version": version, Accept: "application/json" };
  const secret = token();
  if (secret) headers["X-Auth-Token"] = secret;
  let payload;
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = typeof body === "string" ? body : JSON.stringify(body);
  }
  // A GET we have an answer for asks whether it changed: an unchanged one is a 304, no body.
  const remembered = method === "GET" ? answers.get(path) : undefined;
  if (remembered) headers["If-None-Match"] = remembered.etag;
  const response = await fetch(path, { method, headers, body: payload, cache: "no-store" });
  if (response.status === 304 && remembered) {
    stats.notModified += 1;
    return remembered.data;
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const error = data && data.error ? data.error : {};
    const failure = new ApiError(response.status, error.message || text || response.statusText, error.type || "");
    if (response.status === 401) listeners.forEach((callback) => callback(failure));
    throw failure;
  }
  if (method === "GET") remember(path, response.headers.get("ETag"), data);
  return data;
}

// The last answer of each polled GET with its ETag (the API tags every /v1 read), at most
// MAX_REMEMBERED of them: a refresh sends If-None-Match and reuses the answer on a 304.
const MAX_REMEMBERED = 64;
const answers = new Map();
export const stats = { notModified: 0 };

function remember(path, etag, data) {
  answers.delete(path);
  if (!etag) return;
  answers.set(path, { etag, data });
  if (answers.size > MAX_REMEMBERED) answers.delete(answers.keys().next().value);
}

export const get = (path) => api("GET", path);

const FINAL = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);

// The action once it has ended (polled every half second; gives up after `seconds`).
export async function actionEnded(actionId, seconds = 120) {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const { action } = await get(`/v1/actions/${encodeURIComponent(actionId)}?summary=true`);
    if (FINAL.has(action.status)) return action;
    if (Date.now() > until) throw new ApiError(504, `Action ${actionId} did not end in ${seconds}s.`, "Timeout");
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null) search.append(key, String(item));
    }
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

