// A trace, stepped through forward and back (← →, or j k): the live
// cluster's (/trace) or a file a failing simulation wrote
// (RECONCILE_SIM_TRACE_DIR). The selected entry shows what caused it, back
// to the first write, and what it led to.
import { html, useEffect, useMemo, useRef, useState } from "/vendor/preact.js";
import { causesOf, describe, effectsOf, indexTrace } from "./causality.js";

const shownAround = 40;

async function loadLive() {
  const response = await fetch("/trace");
  if (!response.ok) throw new Error(`/trace: ${response.status} ${await response.text()}`);
  return response.json();
}

function checkTrace(file, name) {
  if (file?.format !== "reconcile-sim-trace/v1" || !Array.isArray(file.trace)) {
    throw new Error(`${name} is not a reconcile-sim trace (format reconcile-sim-trace/v1)`);
  }
  return file;
}

function Entry({ index, i, selected, onSelect }) {
  const entry = index.entries[i];
  return html`<li>
    <button class="entry ${entry.type} ${selected ? "selected" : ""}" data-entry=${i} aria-current=${selected} onClick=${() => onSelect(i)}>
      ${describe(entry)}
    </button>
  </li>`;
}

function Causality({ index, i, onSelect }) {
  const { chain, end } = causesOf(index, i);
  const effects = effectsOf(index, i);
  const entry = index.entries[i];
  return html`<div class="causality">
    <h3>Selected</h3>
    <p class="selected-entry" data-selected=${i}>${describe(entry)}</p>
    ${entry.trigger && html`<p>queued by <code>${entry.trigger}</code></p>`}
    <h3>Caused by</h3>
    <ol class="causes" aria-label="caused by">
      ${chain.map((j) => html`<li><button class="link" data-cause=${j} onClick=${() => onSelect(j)}>${describe(index.entries[j])}</button></li>`)}
    </ol>
    ${end && html`<p class="end">${end}</p>`}
    <h3>Led to</h3>
    ${
      effects.length === 0
        ? html`<p class="empty">nothing recorded</p>`
        : html`<ul class="effects" aria-label="led to">
          ${effects.map((j) => html`<li><button class="link" data-effect=${j} onClick=${() => onSelect(j)}>${describe(index.entries[j])}</button></li>`)}
        </ul>`
    }
  </div>`;
}

export function TraceView({ config, focus }) {
  const [file, setFile] = useState(undefined);
  const [source, setSource] = useState("");
  const [error, setError] = useState(undefined);
  const [cursor, setCursor] = useState(0);
  const [filter, setFilter] = useState(focus ?? "");
  const index = useMemo(() => (file === undefined ? undefined : indexTrace(file.trace)), [file]);
  const visible = useMemo(() => {
    if (index === undefined) return [];
    const all = index.entries.map((_, i) => i);
    return filter === "" ? all : all.filter((i) => describe(index.entries[i]).includes(filter));
  }, [index, filter]);

  const open = async (load, name) => {
    try {
      const loaded = checkTrace(await load(), name);
      setFile(loaded);
      setSource(name);
      setError(undefined);
      const entries = loaded.trace;
      // A focus opens on the write that created it; otherwise at the end, where a failure is.
      const created =
        focus === undefined
          ? -1
          : entries.findIndex((e) => e.type === "call" && e.verb === "create" && e.target === focus);
      setCursor(created !== -1 ? created : Math.max(0, entries.length - 1));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  useEffect(() => {
    if (config.trace) void open(loadLive, "the live cluster");
  }, []);
  const latest = useRef({ visible, cursor });
  latest.current = { visible, cursor };
  useEffect(() => {
    const onKey = (event) => {
      // The entries and cursor of the last render: a key pressed right after the filter changed
      // steps through the filtered entries, not those the listener was added with.
      const { visible, cursor } = latest.current;
      if (event.target instanceof HTMLInputElement || visible.length === 0) return;
      const at = visible.indexOf(cursor);
      const step = (delta) => {
        event.preventDefault();
        const next = visible[Math.min(visible.length - 1, Math.max(0, (at === -1 ? 0 : at) + delta))];
        setCursor(next);
      };
      if (event.key === "ArrowRight" || event.key === "j") step(1);
      else if (event.key === "ArrowLeft" || event.key === "k") step(-1);
      else if (event.key === "Home") step(-visible.length);
      else if (event.key === "End") step(visible.length);
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);

  const onFile = (event) => {
    const chosen = event.currentTarget.files?.[0];
    if (chosen !== undefined) void open(async () => JSON.parse(await chosen.text()), chosen.name);
  };
  const at = Math.max(0, visible.indexOf(cursor));
  const shown = visible.slice(Math.max(0, at - shownAround), at + shownAround);
  return html`<section class="trace" aria-label="trace">
    <div class="trace-controls">
      ${config.trace && html`<button onClick=${() => open(loadLive, "the live cluster")}>Reload the live trace</button>`}
      <label>Open a trace file <input type="file" accept=".json,application/json" onChange=${onFile} /></label>
      <input type="search" placeholder="filter entries" aria-label="filter entries" value=${filter} onInput=${(e) => setFilter(e.currentTarget.value)} />
      <button aria-label="step back (←)" onClick=${() => setCursor(visible[Math.max(0, at - 1)] ?? cursor)}>←</button>
      <button aria-label="step forward (→)" onClick=${() => setCursor(visible[Math.min(visible.length - 1, at + 1)] ?? cursor)}>→</button>
      ${index && html`<span class="position" data-position=${cursor}>${source}: entry ${cursor + 1} of ${index.entries.length}${file.dropped ? ` (${file.dropped} older forgotten)` : ""}</span>`}
    </div>
    ${error && html`<p class="error">${error}</p>`}
    ${file?.violation && html`<p class="error">invariant "${file.violation.invariant}" broken at +${(file.violation.at / 1000).toFixed(3)}s: ${file.violation.message}</p>`}
    ${
      index === undefined
        ? html`<p class="empty">${config.trace ? "Loading the live trace…" : "Open a trace file that a simulation wrote."}</p>`
        : html`<div class="trace-body">
          <ol class="entries">${shown.map((i) => html`<${Entry} key=${i} index=${index} i=${i} selected=${i === cursor} onSelect=${setCursor} />`)}</ol>
          ${index.entries[cursor] && html`<${Causality} index=${index} i=${cursor} onSelect=${setCursor} />`}
        </div>`
    }
  </section>`;
}
