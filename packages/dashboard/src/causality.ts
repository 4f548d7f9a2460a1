import type {
  DeepReadonly,
  KubeObject,
  ListOptions,
  ObjectList,
  ResourceDescriptor,
  Scale,
  WatchEvent,
  WatchOptions,
} from "@reconcile/api";
import type {
  CallOptions,
  Client,
  DeleteCollectionOptions,
  DeleteOptions,
  DeleteResult,
  GetOptions,
  PatchOptions,
  ResourceClient,
  UpdateOptions,
  WriteOptions,
} from "@reconcile/client";
import { deliveryText, RecentRing, type ReconcileObserver } from "@reconcile/controller";

// What a running cluster did and why, as @reconcile/sim writes a run
// (`reconcile-sim-trace/v1`): each component's writes with the
// resourceVersion they made, and each reconcile with the delivery that
// queued it. A reconcile's trigger names a resourceVersion; the write that
// made it names the reconcile in flight for its object's owner: the chain
// user's write → reconcile → write → reconcile … follows from the entries.

/** A write a component made: the sim trace's `call` entry, with the controller owner of what it wrote. */
export interface CallEntry {
  /** Ms since the recording started. */
  t: number;
  type: "call";
  component: string;
  /** The component's count of calls when this one started. */
  index: number;
  verb: string;
  /** `plural` or `plural.group`, with `/subresource`. */
  resource: string;
  /** `namespace/name` (or `name`). */
  target: string;
  /** The HTTP code of the answer, or the error's. */
  code: number;
  /** The resourceVersion the write made. */
  rv?: string | undefined;
  /** The error's reason. */
  reason?: string | undefined;
  /** `namespace/name` of the written object's controller (its owner reference with `controller: true`). */
  owner?: string | undefined;
}

/** A finished reconcile: the sim trace's `reconcile` entry, with how long it took. */
export interface ReconcileEntry {
  t: number;
  type: "reconcile";
  component: string;
  controller: string;
  key: string;
  reason: string | undefined;
  outcome: string;
  error?: string | undefined;
  /** The delivery that queued it: `MODIFIED pods default/web-1 rv 42`. */
  trigger?: string | undefined;
  /** Ms from its start to its end (`t`). */
  took?: number | undefined;
}

export type CausalityEntry = CallEntry | ReconcileEntry | { t: number; type: "note"; text: string };

/** What `/trace` serves: a sim trace file, without a seed or faults, of a live cluster. */
export interface LiveTraceFile {
  format: "reconcile-sim-trace/v1";
  live: true;
  /** When the recording started, in ms since the epoch (entries' `t` count from it). */
  startedAt: number;
  /** Entries forgotten to keep the last `capacity`. */
  dropped: number;
  seed: null;
  violation: null;
  faults: [];
  trace: CausalityEntry[];
}

/**
 * Records a live cluster's causality: wrap each component's client with
 * {@link client} and give each component's reconcile observer from
 * {@link observer}. Keeps the last `capacity` entries (default 20,000) in a
 * ring; nothing is recorded for reads.
 */
export class CausalityRecorder {
  readonly capacity: number;
  readonly startedAt: number;
  readonly #now: () => number;
  readonly #ring: RecentRing<CausalityEntry | CallRecord>;
  readonly #calls = new Map<string, number>();

  constructor(options: { capacity?: number | undefined; now?: (() => number) | undefined } = {}) {
    this.capacity = options.capacity ?? 20_000;
    if (!Number.isInteger(this.capacity) || this.capacity < 1) {
      throw new RangeError(`CausalityRecorder: capacity must be a positive integer, got ${options.capacity}`);
    }
    this.#now = options.now ?? Date.now;
    this.startedAt = this.#now();
    this.#ring = new RecentRing(this.capacity);
  }

  /** `client` as `component`: every write it makes is recorded with its answer. */
  client<C extends Client>(component: string, client: C): C {
    const recorder = this;
    // One wrapper per resource and namespace: controllers ask for a resource client per write.
    const wrapped = new Map<ResourceDescriptor, Map<string | undefined, ResourceClient<KubeObject>>>();
    const resourceClient = (resource: ResourceDescriptor, namespace?: string) => {
      let byNamespace = wrapped.get(resource);
      if (byNamespace === undefined) wrapped.set(resource, (byNamespace = new Map()));
      let wrapper = byNamespace.get(namespace);
      if (wrapper === undefined) {
        wrapper = recorder.#resourceClient(component, client.resource(resource, namespace), resource);
        byNamespace.set(namespace, wrapper);
      }
      return wrapper;
    };
    return new Proxy(client, {
      get(target, property, receiver) {
        if (property === "resource") return resourceClient;
        if (property === "bindPod") {
          const bind = Reflect.get(target, property, receiver) as (...args: unknown[]) => Promise<unknown>;
          // A binding is recorded as the create of `pods/binding` for the pod it names.
          return (namespace: string, binding: { metadata?: { name?: string } }, ...rest: unknown[]) =>
            recorder.#record(
              component,
              "pods/binding",
              "create",
              "create",
              [binding?.metadata?.name ?? ""],
              namespace,
              () => bind.call(target, namespace, binding, ...rest),
            );
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /** The observer of `component`'s reconciles (`reconcileObserver` of a controller's context or a manager). */
  observer(component: string, next?: ReconcileObserver): ReconcileObserver {
    return (record) => {
      // Built field by field, never spread or deleted: one object of one shape per entry.
      const entry: ReconcileEntry = {
        t: this.#now() - this.startedAt,
        type: "reconcile",
        component,
        controller: record.controller,
        key: typeof record.key === "string" ? record.key : JSON.stringify(record.key),
        reason: record.reason,
        outcome: record.outcome,
        took: record.endedAt - record.startedAt,
      };
      if (record.error !== undefined) {
        entry.error = record.error instanceof Error ? record.error.message : String(record.error);
      }
      if (record.trigger !== undefined) entry.trigger = deliveryText(record.trigger);
      this.#ring.push(entry);
      next?.(record);
    };
  }

  /** A line of its own in the trace (`note`). */
  note(text: string): void {
    this.#ring.push({ t: this.#now() - this.startedAt, type: "note", text });
  }

  /** The entries kept, oldest first, as a trace file. */
  traceFile(): LiveTraceFile {
    const trace = this.#ring.list().map((entry) => (entry instanceof CallRecord ? entry.entry() : entry));
    return {
      format: "reconcile-sim-trace/v1",
      live: true,
      startedAt: this.startedAt,
      dropped: Math.max(0, this.#ring.total - this.capacity),
      seed: null,
      violation: null,
      faults: [],
      trace,
    };
  }

  #resourceClient<T extends KubeObject>(
    component: string,
    inner: ResourceClient<T>,
    resource: ResourceDescriptor,
  ): ResourceClient<T> {
    const plural = resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
    return new RecordedResourceClient(inner, plural, (method, verb, args, write) =>
      this.#record(component, plural, method, verb, args, inner.namespace, write),
    );
  }

  /** Makes one write and records it: its answer's code, target, owner and resourceVersion. */
  #record<R>(
    component: string,
    plural: string,
    method: string,
    verb: string,
    args: readonly unknown[],
    namespace: string | undefined,
    write: () => Promise<R>,
  ): Promise<R> {
    const started = this.#start(component);
    const subresource = subresourceOf(method, args);
    const what = subresource ? `${plural}/${subresource}` : plural;
    let pending: Promise<R>;
    try {
      pending = write();
    } catch (error) {
      // A client that throws at once is recorded as one that rejects.
      pending = Promise.reject(error);
    }
    return pending.then(
      (result) => {
        const record = new CallRecord(started, component, verb, what, method === "create" ? 201 : 200);
        record.describe(namespace, args[0], result);
        record.rv = resourceVersionOf(result);
        this.#ring.push(record);
        return result;
      },
      (error: unknown) => {
        const { code, reason } = failure(error);
        const record = new CallRecord(started, component, verb, what, code);
        record.describe(namespace, args[0], undefined);
        record.reason = reason;
        this.#ring.push(record);
        throw error;
      },
    );
  }

  /** A call's decision point: the component's count of calls, and when it started. */
  #start(component: string): { index: number; t: number } {
    const index = this.#calls.get(component) ?? 0;
    this.#calls.set(component, index + 1);
    return { index, t: this.#now() - this.startedAt };
  }
}

function subresourceOf(method: string, args: readonly unknown[]): string | undefined {
  if (method === "updateStatus") return "status";
  if (method === "finalize") return "finalize";
  if (method === "updateScale") return "scale";
  const options = (method === "patch" ? args[2] : args[1]) as { subresource?: string } | undefined;
  return options?.subresource;
}

/**
 * A recorded write as kept in the ring: every member set at once, one shape
 * for all; the trace's `call` entry, its strings joined, is made when the
 * trace is read.
 */
class CallRecord {
  readonly t: number;
  readonly index: number;
  namespace: string | undefined = undefined;
  name = "";
  owner: string | undefined = undefined;
  rv: string | undefined = undefined;
  reason: string | undefined = undefined;

  constructor(
    started: { index: number; t: number },
    readonly component: string,
    readonly verb: string,
    readonly resource: string,
    readonly code: number,
  ) {
    this.t = started.t;
    this.index = started.index;
  }

  /** Takes the written object's name and namespace, and its controller's name, from the call and its answer. */
  describe(namespace: string | undefined, first: unknown, result: unknown): void {
    const object = (metaOf(result) !== undefined ? result : first) as KubeObject | string | undefined;
    if (typeof object === "string" || object === undefined) {
      this.namespace = namespace;
      this.name = object ?? "";
      return;
    }
    const meta = object.metadata ?? {};
    this.namespace = meta.namespace ?? namespace;
    this.name = meta.name ?? "";
    const references = meta.ownerReferences;
    if (references !== undefined)
      for (const ref of references) if (ref.controller === true) this.owner = ref.name;
  }

  entry(): CallEntry {
    const ns = this.namespace;
    const entry: CallEntry = {
      t: this.t,
      type: "call",
      component: this.component,
      index: this.index,
      verb: this.verb,
      resource: this.resource,
      target: ns ? `${ns}/${this.name}` : this.name,
      code: this.code,
    };
    if (this.rv !== undefined) entry.rv = this.rv;
    if (this.reason !== undefined) entry.reason = this.reason;
    if (this.owner !== undefined) entry.owner = ns ? `${ns}/${this.owner}` : this.owner;
    return entry;
  }
}

type Recorder = <R>(
  method: string,
  verb: string,
  args: readonly unknown[],
  write: () => Promise<R>,
) => Promise<R>;

/** A resource client whose writes are recorded; reads go straight through. */
class RecordedResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly resource: ResourceDescriptor<T>;
  readonly namespace: string | undefined;
  readonly finalize?: (object: T | DeepReadonly<T>, options?: WriteOptions) => Promise<T>;

  constructor(
    readonly inner: ResourceClient<T>,
    readonly plural: string,
    readonly record: Recorder,
  ) {
    this.resource = inner.resource;
    this.namespace = inner.namespace;
    if (inner.finalize !== undefined)
      this.finalize = (object, options) =>
        this.record("finalize", "update", [object, options], () => inner.finalize!(object, options));
  }

  list(options?: ListOptions): Promise<ObjectList<T>> {
    return this.inner.list(options);
  }
  watch(options?: WatchOptions): Promise<AsyncIterable<WatchEvent<T>>> {
    return this.inner.watch(options);
  }
  get(name: string, options?: GetOptions): Promise<T> {
    return this.inner.get(name, options);
  }
  getScale(name: string, options?: CallOptions): Promise<Scale> {
    return this.inner.getScale(name, options);
  }
  create(object: T | DeepReadonly<T>, options?: WriteOptions): Promise<T> {
    return this.record("create", "create", [object, options], () => this.inner.create(object, options));
  }
  update(object: T | DeepReadonly<T>, options?: UpdateOptions): Promise<T> {
    return this.record("update", "update", [object, options], () => this.inner.update(object, options));
  }
  updateStatus(object: T | DeepReadonly<T>, options?: WriteOptions): Promise<T> {
    return this.record("updateStatus", "update", [object, options], () =>
      this.inner.updateStatus(object, options),
    );
  }
  patch(name: string, patch: unknown, options: PatchOptions): Promise<T> {
    return this.record("patch", "patch", [name, patch, options], () =>
      this.inner.patch(name, patch, options),
    );
  }
  delete(name: string, options?: DeleteOptions): Promise<DeleteResult<T>> {
    return this.record("delete", "delete", [name, options], () => this.inner.delete(name, options));
  }
  deleteCollection(options?: DeleteCollectionOptions): Promise<ObjectList<T>> {
    return this.record("deleteCollection", "deletecollection", [options], () =>
      this.inner.deleteCollection(options),
    );
  }
  updateScale(name: string, scale: Scale, options?: WriteOptions): Promise<Scale> {
    return this.record("updateScale", "update", [name, scale, options], () =>
      this.inner.updateScale(name, scale, options),
    );
  }
}

function metaOf(value: unknown): unknown {
  return (value as { metadata?: unknown } | undefined)?.metadata;
}

function resourceVersionOf(result: unknown): string | undefined {
  const direct = (result as { metadata?: { resourceVersion?: string } } | undefined)?.metadata
    ?.resourceVersion;
  if (direct !== undefined) return direct;
  return (result as { object?: { metadata?: { resourceVersion?: string } } } | undefined)?.object?.metadata
    ?.resourceVersion;
}

function failure(error: unknown): { code: number; reason: string | undefined } {
  const status = (error as { status?: { code?: number; reason?: string } } | undefined)?.status;
  return { code: status?.code ?? 0, reason: status?.reason || undefined };
}
