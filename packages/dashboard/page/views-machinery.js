// The machinery inside the components: who leads, each controller's queue
// and last reconciles, each informer's cache, the scheduler's queue and
// decisions, each kubelet's pod workers and PLEG, and charts of them over
// the last minute.
import { html, useState } from "/vendor/preact.js";
import { age, duration, Sparkline } from "./ui.js";

export function Charts({ poller }) {
  const history = poller.history;
  const series = (field) => history.map((point) => point[field]);
  const verbs = [...poller.requestRates].filter(([, rate]) => rate > 0).sort(([a], [b]) => (a < b ? -1 : 1));
  return html`<section class="charts" aria-label="charts">
    <${Sparkline} label="reconciles/s" values=${series("reconcileRate")} />
    <${Sparkline} label="queued keys" values=${series("depth")} />
    <${Sparkline} label="pods waiting to schedule" values=${series("pending")} />
    <${Sparkline} label="API requests/s" values=${series("apiRate")} />
    <${Histogram} label="pod startup latency (s)" buckets=${poller.podStart} />
    <p class="verbs">${verbs.map(([verb, rate]) => html`<span>${verb} ${rate.toFixed(1)}/s</span> `)}</p>
  </section>`;
}

/** A histogram's buckets as bars: pods per latency range (the difference of cumulative counts). */
function Histogram({ label, buckets }) {
  const counts = buckets.map((b, i) => ({ le: b.le, count: b.count - (i > 0 ? buckets[i - 1].count : 0) }));
  const total = buckets.at(-1)?.count ?? 0;
  const shown = counts.filter((b) => b.count > 0 || b.le === "+Inf");
  const max = Math.max(1, ...shown.map((b) => b.count));
  return html`<figure class="chart histogram" data-histogram=${label} data-total=${total}>
    <figcaption>${label} <strong>${total}</strong> pods</figcaption>
    <div class="bars" role="img" aria-label="${label}: ${shown.map((b) => `${b.count} up to ${b.le}`).join(", ")}">
      ${shown.map(
        (b) =>
          html`<span class="bar" title="${b.count} pods up to ${b.le} s" style=${{ height: `${Math.round((b.count / max) * 34) + 2}px` }}></span>`,
      )}
    </div>
  </figure>`;
}

export function Leaders({ store }) {
  const leases = [...store.get("leases").values()].filter(
    (lease) => lease.spec?.holderIdentity !== undefined,
  );
  if (leases.length === 0) return null;
  return html`<section class="leaders" aria-label="leader election">
    ${leases.map(
      (lease) => html`<span class="leader" data-lease=${lease.metadata.name}>
        <strong>${lease.metadata.name}</strong> led by ${lease.spec.holderIdentity || "nobody"}, renewed ${age(lease.spec.renewTime)} ago
      </span>`,
    )}
  </section>`;
}

function Expandable({ id, summary, children, open, onToggle }) {
  return html`<tr class="expandable ${open ? "open" : ""}" data-row=${id}>
      ${summary.map((cell, i) => (i === 0 ? html`<td><button class="link" aria-expanded=${open} onClick=${onToggle}>${cell}</button></td>` : html`<td>${cell}</td>`))}
    </tr>
    ${open && html`<tr class="details"><td colspan=${summary.length}>${children}</td></tr>`}`;
}

function ReconcileList({ reconciles }) {
  if (reconciles.length === 0) return html`<p class="empty">no reconcile yet</p>`;
  return html`<table class="inner">
    <thead><tr><th>key</th><th>why queued</th><th>outcome</th><th>took</th><th>reconcile ID</th></tr></thead>
    <tbody>${[...reconciles].reverse().map(
      (r) => html`<tr class=${r.outcome === "success" ? "" : "warn"}>
        <td>${r.key}</td><td>${r.reason ?? "-"}</td>
        <td>${r.outcome}${r.error ? `: ${r.error}` : ""}${r.requeueAfterMs !== undefined ? ` (after ${duration(r.requeueAfterMs)})` : ""}</td>
        <td>${duration(r.durationMs)}</td><td class="id">${r.reconcileID}</td>
      </tr>`,
    )}</tbody>
  </table>`;
}

/** Owners whose expectations are outstanding, in a cell: `default/web +3 −0`. */
function expecting(expectations) {
  if (!Array.isArray(expectations) || expectations.length === 0) return "-";
  return expectations.map((e) => `${e.key} +${e.add} −${e.del}${e.expired ? " (expired)" : ""}`).join(", ");
}

/** The creations and deletions each owner still waits to see, with their age and the pods it waits to see go. */
function Expectations({ expectations }) {
  if (!Array.isArray(expectations)) return null;
  if (expectations.length === 0) return html`<p class="empty">No expectations outstanding.</p>`;
  return html`<table class="inner expectations">
    <thead><tr><th>owner</th><th>creations</th><th>deletions</th><th>set</th><th>pods it waits to see deleted</th></tr></thead>
    <tbody>${expectations.map(
      (e) => html`<tr class=${e.expired ? "warn" : ""}><td>${e.key}</td><td>${e.add}</td><td>${e.del}</td>
        <td>${duration(e.ageMs)} ago${e.expired ? " (expired: no longer waited for)" : ""}</td><td>${(e.deleting ?? []).join(", ") || "-"}</td></tr>`,
    )}</tbody>
  </table>`;
}

export function ControllersTable({ poller }) {
  const [open, setOpen] = useState(undefined);
  const controllers = poller.sources("controller");
  if (controllers.length === 0) return html`<p class="empty">No controller reports its machinery here.</p>`;
  return html`<table class="controllers" aria-label="controllers">
    <thead><tr><th>controller</th><th>component</th><th>queued</th><th>in flight</th><th>waiting (retries)</th><th>expecting</th><th>reconciles</th><th>last</th></tr></thead>
    <tbody>
      ${controllers.map((source) => {
        const state = source.state;
        const queues = state.queues ?? [];
        const depth = queues.reduce((sum, q) => sum + q.depth, 0);
        const inFlight = queues.flatMap((q) => q.processing ?? []);
        const waiting = queues.flatMap((q) => q.waiting ?? []);
        const last = state.reconciles?.recent?.at(-1);
        const id = `${source.component}/${source.name}`;
        return html`<${Expandable}
          key=${id}
          id=${id}
          open=${open === id}
          onToggle=${() => setOpen(open === id ? undefined : id)}
          summary=${[
            source.name,
            source.component,
            depth,
            inFlight.length === 0 ? "-" : inFlight.join(", "),
            waiting.length === 0
              ? "-"
              : waiting
                  .map((w) => `${w.key} in ${duration(w.dueInMs)}${w.requeues ? ` (${w.requeues})` : ""}`)
                  .join(", "),
            expecting(state.expectations),
            state.reconciles?.total ?? 0,
            last === undefined ? "-" : `${last.key} ${last.outcome}`,
          ]}
        >
          <${Expectations} expectations=${state.expectations} />
          ${Object.entries(state)
            .filter(([field]) => !["running", "queues", "reconciles", "expectations"].includes(field))
            .map(
              ([field, value]) =>
                html`<p><strong>${field}</strong> <code>${JSON.stringify(value)}</code></p>`,
            )}
          <${ReconcileList} reconciles=${state.reconciles?.recent ?? []} />
        <//>`;
      })}
    </tbody>
  </table>`;
}

export function InformersTable({ poller }) {
  const informers = poller.sources("informer");
  if (informers.length === 0) return null;
  return html`<table class="informers" aria-label="informers">
    <thead><tr><th>informer</th><th>component</th><th>cached</th><th>synced</th><th>resourceVersion</th><th>lag (not yet cached / not yet handled)</th></tr></thead>
    <tbody>${informers.map(
      (s) =>
        html`<tr data-informer=${s.name}><td>${s.name}</td><td>${s.component}</td><td>${s.state.cached}</td><td>${s.state.synced ? "yes" : "no"}</td><td>${s.state.resourceVersion}</td>
          <td>${s.state.backlog === undefined ? "-" : `${s.state.backlog.deltas} / ${s.state.backlog.notifications}`}</td></tr>`,
    )}</tbody>
  </table>`;
}

export function SchedulerPanel({ poller, onSelect }) {
  const schedulers = poller.sources("scheduler");
  return schedulers.map((source) => {
    const { queue = {}, decisions = [], nodes } = source.state;
    return html`<section class="scheduler" aria-label="scheduler ${source.name}">
      <h3>${source.name}</h3>
      <p>
        ${nodes} nodes · active ${queue.active ?? 0} · backoff ${queue.backoff ?? 0} · unschedulable ${queue.unschedulable ?? 0} · gated ${queue.gated ?? 0}
      </p>
      <table class="inner">
        <thead><tr><th>pod</th><th>decision</th><th>feasible / evaluated</th></tr></thead>
        <tbody>${[...decisions]
          .reverse()
          .slice(0, 20)
          .map(
            (d) => html`<tr class=${d.result === "Scheduled" ? "" : "warn"}>
            <td><button class="link" onClick=${() => onSelect(d.pod)}>${d.pod}</button></td>
            <td>${d.result === "Scheduled" ? `→ ${d.node}` : d.message}</td>
            <td>${d.feasibleNodes} / ${d.evaluatedNodes}</td>
          </tr>`,
          )}</tbody>
      </table>
    </section>`;
  });
}

export function KubeletsTable({ poller }) {
  const [open, setOpen] = useState(undefined);
  const kubelets = poller.sources("kubelet");
  if (kubelets.length === 0) return null;
  return html`<table class="kubelets" aria-label="kubelets">
    <thead><tr><th>node</th><th>pods</th><th>syncing</th><th>terminating</th><th>terminated</th><th>PLEG relisted</th></tr></thead>
    <tbody>
      ${kubelets.map((source) => {
        const { podWorkers = [], pleg = {}, pods } = source.state;
        const count = (state) => podWorkers.filter((w) => w.state === state).length;
        const relisted =
          pleg.lastRelistAt === undefined ? "never" : `${duration(poller.view.at - pleg.lastRelistAt)} ago`;
        return html`<${Expandable}
          key=${source.name}
          id=${`kubelet/${source.name}`}
          open=${open === source.name}
          onToggle=${() => setOpen(open === source.name ? undefined : source.name)}
          summary=${[source.name, pods, count("sync"), count("terminating"), count("terminated"), pleg.unhealthy ?? relisted]}
        >
          <table class="inner">
            <thead><tr><th>pod</th><th>work</th><th>busy</th><th>grace</th></tr></thead>
            <tbody>${podWorkers.map(
              (w) =>
                html`<tr><td>${w.fullname}</td><td>${w.state}</td><td>${w.working ? "yes" : "no"}</td><td>${w.gracePeriodSeconds ?? "-"}</td></tr>`,
            )}</tbody>
          </table>
        <//>`;
      })}
    </tbody>
  </table>`;
}

export function MachineryView({ poller, store, config, onSelect }) {
  if (!config.machinery) {
    return html`<section class="machinery"><${Charts} poller=${poller} /><${Leaders} store=${store} />
      <p class="empty">This dashboard reads only the API server: give it the components (in process, or their /debug/machinery URLs) to see their queues, reconciles, scheduling decisions and pod workers.</p></section>`;
  }
  return html`<section class="machinery">
    <${Charts} poller=${poller} />
    <${Leaders} store=${store} />
    ${poller.view.errors.map((e) => html`<p class="error">${e.component}: ${e.message}</p>`)}
    <h2>Controllers</h2>
    <${ControllersTable} poller=${poller} />
    <h2>Scheduler</h2>
    <${SchedulerPanel} poller=${poller} onSelect=${onSelect} />
    <h2>Kubelets</h2>
    <${KubeletsTable} poller=${poller} />
    <h2>Informers</h2>
    <${InformersTable} poller=${poller} />
  </section>`;
}
