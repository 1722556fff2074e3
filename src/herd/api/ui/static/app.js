// The dashboard: picks the view for the path, polls it for live updates, asks for a token on 401.

import { loadConstants, onUnauthorized, setToken, token } from "./api.js";
import { fill, h } from "./dom.js";
import { actionView } from "./views/action.js";
import { clusterView } from "./views/cluster.js";
import { clustersView } from "./views/clusters.js";
import { deletionsView } from "./views/deletions.js";
import { healthView } from "./views/health.js";
import { nodeView } from "./views/node.js";
import { relocationView } from "./views/relocation.js";

const POLL_SECONDS = Number(new URLSearchParams(location.search).get("poll")) || 3;

const ROUTES = [
  [/^\/ui\/?$/, "clusters", () => clustersView()],
  [/^\/ui\/clusters\/?$/, "clusters", () => clustersView()],
  [/^\/ui\/clusters\/([^/]+)\/?$/, "clusters", (m) => clusterView(decodeURIComponent(m[1]))],
  [/^\/ui\/actions\/([^/]+)\/?$/, "clusters", (m) => actionView(decodeURIComponent(m[1]))],
  [/^\/ui\/nodes\/([^/]+)\/?$/, "clusters", (m) => nodeView(decodeURIComponent(m[1]))],
  [/^\/ui\/deletions\/?$/, "deletions", () => deletionsView()],
  [/^\/ui\/health\/?$/, "health", () => healthView()],
  [/^\/ui\/relocation\/?$/, "relocation", () => relocationView()],
];

const main = document.getElementById("main");
const live = document.getElementById("live-status");
const tokenForm = document.getElementById("token-form");
const signOut = document.getElementById("sign-out");
let current = null;
let timer = null;
let busy = false;

function route() {
  for (const [pattern, nav, make] of ROUTES) {
    const match = location.pathname.match(pattern);
    if (match) return { nav, view: make(match) };
  }
  return { nav: "", view: null };
}

async function refresh() {
  if (!current || busy || document.hidden) return;
  busy = true;
  try {
    await current.refresh();
    live.textContent = `Updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    if (error.status !== 401) live.textContent = `Update failed: ${error.message}`;
  } finally {
    busy = false;
  }
}

async function start() {
  clearInterval(timer);
  // The views read the server's names (api.js constants()) from the moment they are made.
  try {
    await loadConstants();
  } catch (error) {
    fill(main, h("h1", null, "herd is not answering"), h("p", null, error.message));
    return;
  }
  const { nav, view } = route();
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === nav) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  signOut.hidden = !token();
  if (!view) {
    fill(main, h("h1", null, "Not found"), h("p", null, h("a", { href: "/ui/" }, "Back to the clusters")));
    return;
  }
  current = view;
  document.title = `${view.title} · herd`;
  view.mount(main);
  await refresh();
  if (view.live !== false) timer = setInterval(refresh, POLL_SECONDS * 1000);
}

onUnauthorized(() => {
  clearInterval(timer);
  current = null;
  fill(main);
  main.hidden = true;
  tokenForm.hidden = false;
  document.getElementById("token-input").focus();
});

tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  setToken(document.getElementById("token-input").value.trim());
  tokenForm.hidden = true;
  main.hidden = false;
  start();
});

signOut.addEventListener("click", () => {
  setToken(null);
  location.reload();
});

// Links inside the dashboard change the view without reloading the page.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[href^='/ui']");
  if (!link || event.ctrlKey || event.metaKey || event.shiftKey || link.target) return;
  event.preventDefault();
  history.pushState(null, "", link.getAttribute("href"));
  start().then(() => main.focus());
});
window.addEventListener("popstate", () => start());
// One refresh on demand, awaited: the browser tests measure what a refresh transfers with it.
window.herdRefresh = async () => {
  if (current) await current.refresh();
};
document.addEventListener("visibilitychange", refresh);

start();
