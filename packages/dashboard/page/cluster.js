// The page's copy of the cluster: every kind listed and watched on the API
// server, as an informer does, relayed by the dashboard on one stream and
// kept in maps by namespace/name. Subscribers hear of changes at most once
// per frame.

/** What the page watches: its name in the store, and the API path of its collection. */
export const watchedKinds = [
  ["nodes", "/api/v1/nodes"],
  ["pods", "/api/v1/pods"],
  ["deployments", "/apis/apps/v1/deployments"],
  ["replicasets", "/apis/apps/v1/replicasets"],
  ["statefulsets", "/apis/apps/v1/statefulsets"],
  ["daemonsets", "/apis/apps/v1/daemonsets"],
  ["jobs", "/apis/batch/v1/jobs"],
  ["services", "/api/v1/services"],
  ["endpointslices", "/apis/discovery.k8s.io/v1/endpointslices"],
  ["leases", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"],
];

export function keyOf(object) {
  const meta = object.metadata ?? {};
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

/** The watched objects, by kind then key; `version` grows with every change. */
export class ClusterStore {
  constructor() {
    this.kinds = new Map(watchedKinds.map(([kind]) => [kind, new Map()]));
    this.synced = new Set();
    this.errors = new Map();
    this.version = 0;
    this.listeners = new Set();
    this.scheduled = false;
  }

  get(kind) {
    return this.kinds.get(kind);
  }

  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  changed() {
    this.version++;
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const listener of this.listeners) listener(this.version);
    });
  }

  /**
   * Follows every kind until `signal` aborts, over one stream from the
   * dashboard (/watch): it lists and watches each kind on the API server, as
   * an informer does, and relays the events. A browser holds only six
   * connections to a server, fewer than the kinds watched.
   */
  async start(signal) {
    const byPath = new Map(watchedKinds.map(([kind, path]) => [path, kind]));
    const query = watchedKinds.map(([, path]) => `path=${encodeURIComponent(path)}`).join("&");
    while (!signal.aborted) {
      try {
        const response = await fetch(`/watch?${query}`, { signal });
        if (!response.ok) throw new Error(`/watch: ${response.status} ${await response.text()}`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffered = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffered += value;
          let newline = buffered.indexOf("\n");
          while (newline !== -1) {
            const line = buffered.slice(0, newline);
            buffered = buffered.slice(newline + 1);
            newline = buffered.indexOf("\n");
            if (line.trim() === "") continue;
            const relayed = JSON.parse(line);
            this.apply(byPath.get(relayed.path), relayed);
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        this.errors.set("watch", error instanceof Error ? error.message : String(error));
        this.changed();
      }
      await sleep(1000, signal);
    }
  }

  /** One relayed line: a kind's (re)list, one of its watch events, or its error. */
  apply(kind, line) {
    const objects = this.kinds.get(kind);
    if (objects === undefined) return;
    if (line.type === "SYNC") {
      objects.clear();
      for (const item of line.items) objects.set(keyOf(item), item);
      this.synced.add(kind);
      this.errors.delete(kind);
    } else if (line.type === "ERROR") {
      this.errors.set(kind, line.message);
    } else if (line.type === "DELETED") {
      objects.delete(keyOf(line.object));
    } else {
      objects.set(keyOf(line.object), line.object);
    }
    this.changed();
  }
}

export async function getJSON(path, signal) {
  const response = await fetch(`/k8s${path}`, { signal, headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
