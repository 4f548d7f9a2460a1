// The machinery inside the components, polled from the dashboard's
// /machinery once a second, and the API server's request counters from its
// /metrics: each poll adds a point to the charts' history.

const historyLength = 60;

export class MachineryPoller {
  constructor() {
    this.view = { at: 0, sources: [], errors: [] };
    this.history = [];
    this.requestRates = new Map();
    this.lastRequests = undefined;
    /** Pod startup latency: the kubelets' `kubelet_pod_start_sli_duration_seconds` buckets (cumulative), summed. */
    this.podStart = [];
    this.listeners = new Set();
  }

  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(signal, { machinery }) {
    void this.loop(signal, machinery);
  }

  async loop(signal, machinery) {
    while (!signal.aborted) {
      const [view, requests, components] = await Promise.all([
        machinery ? fetchBody("/machinery", signal, "json") : undefined,
        fetchBody("/k8s/metrics", signal),
        fetchBody("/component-metrics", signal),
      ]);
      if (signal.aborted) return;
      if (view !== undefined) this.view = view;
      if (components !== undefined)
        this.podStart = histogram(components, "kubelet_pod_start_sli_duration_seconds");
      this.record(requests === undefined ? undefined : requestsByVerb(requests));
      for (const listener of this.listeners) listener();
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  /** Adds one point: reconciles per second, total queue depth, pods the scheduler holds, API requests per second. */
  record(requests) {
    const now = Date.now();
    const controllers = this.sources("controller");
    const reconciles = controllers.reduce((sum, s) => sum + (s.state.reconciles?.total ?? 0), 0);
    const depth = controllers.reduce(
      (sum, s) => sum + (s.state.queues ?? []).reduce((d, q) => d + q.depth + (q.waitingCount ?? 0), 0),
      0,
    );
    const pending = this.sources("scheduler").reduce((sum, s) => {
      const q = s.state.queue ?? {};
      return sum + (q.active ?? 0) + (q.backoff ?? 0) + (q.unschedulable ?? 0);
    }, 0);
    const previous = this.history.at(-1);
    const seconds = previous === undefined ? 0 : (now - previous.at) / 1000;
    const rate = (value, before) =>
      seconds > 0 && before !== undefined ? Math.max(0, (value - before) / seconds) : 0;
    let apiRate = 0;
    if (requests !== undefined) {
      const last = this.lastRequests;
      this.requestRates = new Map();
      for (const [verb, count] of requests)
        this.requestRates.set(verb, rate(count, last?.requests.get(verb)));
      apiRate = [...this.requestRates.values()].reduce((a, b) => a + b, 0);
      this.lastRequests = { requests };
    }
    this.history.push({
      at: now,
      reconciles,
      reconcileRate: rate(reconciles, previous?.reconciles),
      depth,
      pending,
      apiRate,
    });
    if (this.history.length > historyLength) this.history.shift();
  }

  sources(kind) {
    return this.view.sources.filter((source) => source.kind === kind);
  }
}

/** `apiserver_request_total` summed by verb, from Prometheus text. */
export function requestsByVerb(text) {
  const totals = new Map();
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const verb = /verb="([^"]*)"/.exec(line)?.[1] ?? "";
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (Number.isFinite(value)) totals.set(verb, (totals.get(verb) ?? 0) + value);
  }
  return totals;
}

/** A histogram's buckets from Prometheus text, summed over its label sets: `[{ le, count }]`, cumulative, by `le`. */
export function histogram(text, name) {
  const buckets = new Map();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}_bucket{`)) continue;
    const le = /le="([^"]*)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (le !== undefined && Number.isFinite(value)) buckets.set(le, (buckets.get(le) ?? 0) + value);
  }
  const bound = (le) => (le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le));
  return [...buckets].map(([le, count]) => ({ le, count })).sort((a, b) => bound(a.le) - bound(b.le));
}

/** The body of a GET, as text or parsed JSON; undefined when it fails (the next poll tries again). */
async function fetchBody(path, signal, as = "text") {
  try {
    const response = await fetch(path, { signal });
    return response.ok ? await response[as]() : undefined;
  } catch {
    return undefined;
  }
}
