// Reading a trace (a @reconcile/sim run, or the live cluster's /trace):
// each entry in one line, and the causality between entries. A reconcile
// names the delivery that queued it ("MODIFIED pods default/web-1 rv 42");
// the write that made that resourceVersion is the call with the same rv;
// that call was made by the reconcile of its object's owner (or of the
// object itself) in flight when the call started.

export function describe(entry) {
  const at = `+${(entry.t / 1000).toFixed(3)}s`;
  switch (entry.type) {
    case "call": {
      const answer =
        entry.code < 300
          ? `${entry.code}${entry.rv ? ` rv ${entry.rv}` : ""}`
          : `${entry.code} ${entry.reason ?? ""}`;
      return `${at} ${entry.component} ${entry.verb} ${entry.resource} ${entry.target} → ${answer.trim()}`;
    }
    case "event":
      return `${at} ${entry.component} sees ${entry.event} ${entry.resource} ${entry.target} rv ${entry.rv}`;
    case "reconcile": {
      const why = entry.reason === undefined ? "" : ` (${entry.reason})`;
      const error = entry.error === undefined ? "" : `: ${entry.error}`;
      return `${at} ${entry.component} reconciles ${entry.controller} ${entry.key}${why} → ${entry.outcome}${error}`;
    }
    case "fault":
      return `${at} FAULT ${JSON.stringify(entry.fault)}${entry.on === undefined ? "" : ` on ${entry.on}`}`;
    case "lifecycle":
      return `${at} ${entry.component} ${entry.what}`;
    default:
      return `${at} ${entry.text ?? ""}`;
  }
}

/** `MODIFIED pods default/web-1 rv 42` → its parts. */
export function parseTrigger(trigger) {
  const match = /^(\S+) (\S+) (\S+) rv (\S*)$/.exec(trigger ?? "");
  return match === null ? undefined : { type: match[1], informer: match[2], key: match[3], rv: match[4] };
}

/** Indexes a trace once: writes by resourceVersion, reconciles by key. */
export function indexTrace(entries) {
  const writesByRv = new Map();
  const reconcilesByKey = new Map();
  entries.forEach((entry, i) => {
    if (entry.type === "call" && entry.rv && entry.code < 300) writesByRv.set(entry.rv, i);
    if (entry.type === "reconcile") {
      if (!reconcilesByKey.has(entry.key)) reconcilesByKey.set(entry.key, []);
      reconcilesByKey.get(entry.key).push(i);
    }
  });
  return { entries, writesByRv, reconcilesByKey };
}

/** Whether the component that made a call is the controller of a reconcile: `replicaset-controller` and `replicaset`. */
function sameController(component, controller) {
  const simple = (name) => name.replace(/[-_]/g, "");
  return simple(component).startsWith(simple(controller));
}

/** The reconcile that made call `i`: in flight when it started, for its owner or itself; undefined if none. */
export function reconcileOfCall(index, i) {
  const call = index.entries[i];
  let best;
  for (const key of [call.owner, call.target]) {
    for (const r of index.reconcilesByKey.get(key) ?? []) {
      const entry = index.entries[r];
      const start = entry.took === undefined ? Number.NEGATIVE_INFINITY : entry.t - entry.took;
      if (entry.t < call.t || start > call.t) continue;
      const score = sameController(call.component, entry.controller) ? 0 : 1;
      if (best === undefined || score < best.score || (score === best.score && entry.t < best.t)) {
        best = { r, score, t: entry.t };
      }
    }
    if (best !== undefined) return best.r;
  }
  return undefined;
}

/** The write behind reconcile `i`'s trigger: the call that made its resourceVersion. */
export function writeOfReconcile(index, i) {
  const trigger = parseTrigger(index.entries[i].trigger);
  return trigger === undefined ? undefined : index.writesByRv.get(trigger.rv);
}

/**
 * The chain of causes of entry `i`, nearest first: each step a call (the
 * write that queued a reconcile) or a reconcile (that made a call), and at
 * the end why the chain stops.
 */
export function causesOf(index, i, limit = 30) {
  const chain = [];
  let current = i;
  for (let n = 0; n < limit; n++) {
    const entry = index.entries[current];
    let cause;
    if (entry.type === "reconcile") {
      cause = writeOfReconcile(index, current);
      if (cause === undefined) {
        const trigger = parseTrigger(entry.trigger);
        return {
          chain,
          end:
            trigger === undefined
              ? `queued without a delivery (${entry.reason ?? "no reason"}): a requeue, a retry or a periodic pass`
              : `rv ${trigger.rv} of ${trigger.key} was written by no recorded component: a user's or another client's write (or before the recording)`,
        };
      }
    } else if (entry.type === "call") {
      cause = reconcileOfCall(index, current);
      if (cause === undefined)
        return { chain, end: `${entry.component} wrote it outside any recorded reconcile` };
    } else {
      return { chain, end: "" };
    }
    chain.push(cause);
    current = cause;
  }
  return { chain, end: "…" };
}

/** What entry `i` led to: for a write, the reconciles it queued; for a reconcile, the writes it made. */
export function effectsOf(index, i) {
  const entry = index.entries[i];
  const out = [];
  if (entry.type === "call" && entry.rv) {
    index.entries.forEach((other, j) => {
      if (other.type === "reconcile" && parseTrigger(other.trigger)?.rv === entry.rv) out.push(j);
    });
  } else if (entry.type === "reconcile") {
    index.entries.forEach((other, j) => {
      if (
        other.type === "call" &&
        (other.owner === entry.key || other.target === entry.key) &&
        reconcileOfCall(index, j) === i
      ) {
        out.push(j);
      }
    });
  }
  return out;
}
