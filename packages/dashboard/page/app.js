// The page: a header with the cluster's counts, five views (nodes,
// workloads, services, machinery, trace) and a pod's detail beside them.
// Keys: 1–5 switch views, / filters pods by name, Escape closes the detail.
import { html, render, useEffect, useState } from "/vendor/preact.js";
import { ClusterStore } from "./cluster.js";
import { PodDetail } from "./detail.js";
import { MachineryPoller } from "./machinery.js";
import { podStatus } from "./ui.js";
import { NodesView, ServicesView, WorkloadsView } from "./views-cluster.js";
import { MachineryView } from "./views-machinery.js";
import { TraceView } from "./views-trace.js";

const views = [
  ["nodes", "Nodes"],
  ["workloads", "Workloads"],
  ["services", "Services"],
  ["machinery", "Machinery"],
  ["trace", "Trace"],
];

function useVersion(source) {
  const [, setVersion] = useState(0);
  useEffect(() => source.subscribe(() => setVersion((v) => v + 1)), [source]);
}

function Summary({ store }) {
  const pods = [...store.get("pods").values()];
  const counts = new Map();
  for (const pod of pods) {
    const status = podStatus(pod);
    counts.set(status, (counts.get(status) ?? 0) + 1);
  }
  const syncing = [...store.errors].map(
    ([kind, message]) => html`<span class="error">${kind}: ${message}</span>`,
  );
  return html`<p class="summary" aria-live="polite">
    <span data-summary="nodes">${store.get("nodes").size} nodes</span>
    <span data-summary="pods">${pods.length} pods</span>
    ${[...counts].sort().map(([status, n]) => html`<span class="status">${status} ${n}</span>`)}
    ${syncing}
  </p>`;
}

function App({ store, poller, config }) {
  useVersion(store);
  useVersion(poller);
  const [view, setView] = useState(location.hash.slice(1) || "nodes");
  const [filter, setFilter] = useState("");
  const [selected, setSelected] = useState(undefined);
  const [traceFocus, setTraceFocus] = useState(undefined);
  const traceOf = (key) => {
    setTraceFocus(key);
    setView("trace");
  };
  useEffect(() => {
    const onKey = (event) => {
      if (event.key === "Escape") setSelected(undefined);
      if (event.target instanceof HTMLInputElement || event.ctrlKey || event.metaKey || event.altKey) return;
      const index = Number(event.key) - 1;
      if (index >= 0 && index < views.length) setView(views[index][0]);
      if (event.key === "/") {
        event.preventDefault();
        document.getElementById("filter")?.focus();
      }
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);
  useEffect(() => {
    if (location.hash !== `#${view}`) history.replaceState(null, "", `#${view}`);
    const onHash = () => setView(location.hash.slice(1) || "nodes");
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, [view]);
  const props = { store, poller, config, filter, selected, onSelect: setSelected };
  return html`<div class="app">
    <header class="top">
      <h1>${config.title}</h1>
      <nav role="tablist" aria-label="views">
        ${views.map(
          ([id, label], i) =>
            html`<button role="tab" id="tab-${id}" aria-selected=${view === id} aria-keyshortcuts=${String(i + 1)} onClick=${() => setView(id)}>${label}</button>`,
        )}
      </nav>
      <input id="filter" type="search" placeholder="filter pods (/)" aria-label="filter pods by namespace/name" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} />
      <${Summary} store=${store} />
    </header>
    <div class="body">
    <main role="tabpanel" aria-labelledby="tab-${view}" data-view=${view}>
      ${view === "nodes" && html`<${NodesView} ...${props} />`}
      ${view === "workloads" && html`<${WorkloadsView} ...${props} />`}
      ${view === "services" && html`<${ServicesView} ...${props} />`}
      ${view === "machinery" && html`<${MachineryView} ...${props} />`}
      ${view === "trace" && html`<${TraceView} key=${traceFocus ?? ""} config=${config} focus=${traceFocus} />`}
    </main>
    ${selected && html`<${PodDetail} store=${store} poller=${poller} config=${config} podKey=${selected} onTrace=${traceOf} onClose=${() => setSelected(undefined)} />`}
    </div>
  </div>`;
}

async function main() {
  const config = await (await fetch("/config")).json();
  document.title = config.title;
  const store = new ClusterStore();
  const poller = new MachineryPoller();
  const abort = new AbortController();
  addEventListener("pagehide", () => abort.abort());
  store.start(abort.signal);
  poller.start(abort.signal, config);
  const root = document.getElementById("root");
  root.textContent = "";
  render(html`<${App} store=${store} poller=${poller} config=${config} />`, root);
}

void main();
