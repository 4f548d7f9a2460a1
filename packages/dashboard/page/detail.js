// One pod, and why it is what it is: the chain of objects and reconciles
// that made it (from its top owner down, with who wrote each object and the
// owner's reconcile just before it appeared), the scheduler's verdict on
// every node, its kubelet's worker, and its Events.
import { html, useEffect, useState } from "/vendor/preact.js";
import { getJSON, keyOf } from "./cluster.js";
import { age, controllerOf, duration, podStatus, statusClass, storeKind } from "./ui.js";

/** The object and its controllers up to the top, top first. */
function ownerChain(store, pod) {
  const chain = [{ kind: "Pod", object: pod }];
  let current = pod;
  for (let depth = 0; depth < 5; depth++) {
    const ref = controllerOf(current);
    if (ref === undefined) break;
    const kinds = store.get(storeKind(ref.kind));
    const owner = kinds?.get(`${current.metadata.namespace}/${ref.name}`);
    if (owner === undefined) {
      chain.unshift({ kind: ref.kind, missing: `${current.metadata.namespace}/${ref.name}` });
      break;
    }
    chain.unshift({ kind: ref.kind, object: owner });
    current = owner;
  }
  return chain;
}

/**
 * Who has written the object, as the API server recorded it (managedFields,
 * oldest first): a manager and the subresource it wrote through. Times
 * have whole seconds only, so who came first within a second is unknown.
 */
function writers(object) {
  const entries = [...(object.metadata?.managedFields ?? [])];
  entries.sort((a, b) => (a.time ?? "").localeCompare(b.time ?? ""));
  return [...new Set(entries.map((e) => (e.subresource ? `${e.manager} (${e.subresource})` : e.manager)))];
}

/** The controllers (their queues' names) that reconcile each kind into what it owns. */
const controllersOf = {
  Deployment: ["deployment"],
  ReplicaSet: ["replicaset"],
  StatefulSet: ["statefulset"],
  DaemonSet: ["daemonset"],
  Job: ["job"],
  CronJob: ["cronjob"],
  ReplicationController: ["replicationmanager"],
};

/** The reconciles of `key` by the controllers of `kind`, and the last one that started before `before` (ms). */
function reconcilesOf(poller, kind, key, before) {
  const names = controllersOf[kind];
  const all = poller
    .sources("controller")
    .filter((source) => names === undefined || names.includes(source.name))
    .flatMap((source) =>
      (source.state.reconciles?.recent ?? []).map((r) => ({ ...r, component: source.component })),
    )
    .filter((r) => r.key === key);
  const prior = all.filter((r) => before === undefined || r.startedAt <= before + 1000);
  return { all, cause: prior.at(-1) };
}

function Chain({ store, poller, pod }) {
  const chain = ownerChain(store, pod);
  return html`<ol class="chain" aria-label="why this pod exists">
    ${chain.map((link, i) => {
      if (link.missing)
        return html`<li><span class="kind">${link.kind}</span> ${link.missing} <em>(not in view)</em></li>`;
      const object = link.object;
      const next = chain[i + 1]?.object;
      const created = Date.parse(object.metadata.creationTimestamp ?? "");
      const child = next === undefined ? undefined : Date.parse(next.metadata.creationTimestamp ?? "");
      const { all, cause } = reconcilesOf(poller, link.kind, keyOf(object), child);
      const written = writers(object);
      return html`<li data-chain=${link.kind}>
        <span class="kind">${link.kind}</span> <strong>${keyOf(object)}</strong>${" "}
        created ${age(object.metadata.creationTimestamp)} ago${
          written.length > 0
            ? html`, written by ${written.map((w, n) => html`${n > 0 ? ", " : ""}<code>${w}</code>`)}`
            : ""
        }
        ${Number.isFinite(created) ? html` <time>${new Date(created).toISOString()}</time>` : ""}
        ${
          next !== undefined &&
          html`<p class="because">
            ${
              cause === undefined
                ? html`no reconcile of it from before the ${chain[i + 1].kind} appeared is left in its controller's history (${all.length} remembered)`
                : html`→ its controller's last reconcile before the ${chain[i + 1].kind} appeared: <strong>${cause.controller}</strong>
                    (queued because: <em>${cause.reason ?? "-"}</em>) at <time>${new Date(cause.startedAt).toISOString()}</time>,
                    ${cause.outcome} in ${duration(cause.durationMs)}`
            }
          </p>`
        }
      </li>`;
    })}
  </ol>`;
}

function Scheduling({ poller, podKey }) {
  const decisions = poller
    .sources("scheduler")
    .flatMap((s) => s.state.decisions ?? [])
    .filter((d) => d.pod === podKey);
  const last = decisions.at(-1);
  if (last === undefined) return html`<p class="empty">No scheduling decision remembered for this pod.</p>`;
  const top = last.scores[0]?.score;
  const ties = last.scores.filter((s) => s.score === top).length;
  return html`<div class="decision" data-decision=${last.result}>
    <p>
      <strong>${last.result === "Scheduled" ? `Scheduled to ${last.node}` : last.result}</strong>
      ${last.message ? html` — ${last.message}` : ""} (${last.feasibleNodes} of ${last.evaluatedNodes} nodes evaluated fit; ${decisions.length} attempt${decisions.length === 1 ? "" : "s"} remembered)
    </p>
    <table class="inner">
      <thead><tr><th>node</th><th>filters</th><th>score</th></tr></thead>
      <tbody>
        ${last.scores.map(
          (s) => html`<tr class=${s.node === last.node ? "chosen" : ""} data-score-node=${s.node}>
            <td>${s.node}${s.node === last.node ? " ← picked" : ""}</td><td>passed</td>
            <td>${s.score}${s.score === top ? (ties > 1 ? ` (highest, tied with ${ties - 1} more: picked at random)` : " (highest)") : ""}</td>
          </tr>`,
        )}
        ${last.rejected.map((r) => html`<tr class="warn" data-rejected-node=${r.node}><td>${r.node}</td><td>${r.plugin}: ${r.reasons.join(", ")}</td><td>-</td></tr>`)}
      </tbody>
    </table>
  </div>`;
}

function Worker({ poller, pod }) {
  const uid = pod.metadata.uid;
  const worker = poller
    .sources("kubelet")
    .flatMap((s) => (s.state.podWorkers ?? []).map((w) => ({ ...w, node: s.name })))
    .find((w) => w.uid === uid);
  if (worker === undefined) return html`<p class="empty">No kubelet reports a worker for this pod.</p>`;
  return html`<p class="worker">On ${worker.node}: pod worker <strong>${worker.state}</strong>${worker.working ? ", busy" : ""}</p>`;
}

function Events({ pod }) {
  const [events, setEvents] = useState([]);
  const { namespace, name, uid } = pod.metadata;
  useEffect(() => {
    const abort = new AbortController();
    const load = async () => {
      try {
        const selector = encodeURIComponent(
          `involvedObject.name=${name},involvedObject.namespace=${namespace}`,
        );
        const list = await getJSON(
          `/api/v1/namespaces/${namespace}/events?fieldSelector=${selector}`,
          abort.signal,
        );
        setEvents((list.items ?? []).filter((e) => !e.involvedObject?.uid || e.involvedObject.uid === uid));
      } catch {
        // The next poll tries again.
      }
    };
    void load();
    const timer = setInterval(load, 2000);
    return () => {
      clearInterval(timer);
      abort.abort();
    };
  }, [namespace, name, uid]);
  if (events.length === 0) return html`<p class="empty">No Events.</p>`;
  const sorted = [...events].sort((a, b) => (eventTime(a) < eventTime(b) ? -1 : 1));
  return html`<table class="inner events">
    <thead><tr><th>age</th><th>type</th><th>reason</th><th>from</th><th>message</th></tr></thead>
    <tbody>${sorted.map(
      (e) =>
        html`<tr class=${e.type === "Warning" ? "warn" : ""}><td>${age(eventTime(e))}</td><td>${e.type}</td><td>${e.reason}</td><td>${e.reportingComponent || e.source?.component || ""}</td><td>${e.message}</td></tr>`,
    )}</tbody>
  </table>`;
}

function eventTime(event) {
  return event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp ?? "";
}

export function PodDetail({ store, poller, config, podKey, onTrace, onClose }) {
  const pod = store.get("pods").get(podKey);
  return html`<aside class="detail" aria-label="pod ${podKey}" data-detail=${podKey}>
    <header>
      <h2>${podKey}</h2>
      <button class="close" onClick=${onClose} aria-label="close (Escape)">×</button>
    </header>
    ${
      pod === undefined
        ? html`<p class="empty">This pod is gone.</p>`
        : html`
          <p><span class="badge ${statusClass(podStatus(pod))}">${podStatus(pod)}</span> on ${pod.spec?.nodeName ?? "no node yet"}${pod.status?.podIP ? ` · ${pod.status.podIP}` : ""}</p>
          <h3>Why it exists</h3>
          <${Chain} store=${store} poller=${poller} pod=${pod} />
          ${config.trace && html`<p><button class="link trace-it" onClick=${() => onTrace(podKey)}>Follow its creation in the trace, write by write</button></p>`}
          <h3>Why it is on its node</h3>
          <${Scheduling} poller=${poller} podKey=${podKey} />
          <${Worker} poller=${poller} pod=${pod} />
          <h3>Events</h3>
          <${Events} pod=${pod} />`
    }
  </aside>`;
}
