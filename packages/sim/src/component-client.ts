import {
  type DeepReadonly,
  type KubeObject,
  type ListOptions,
  newConflict,
  newInternalError,
  newResourceExpired,
  newServiceUnavailable,
  newTimeout,
  newTooManyRequests,
  type ObjectList,
  type ResourceDescriptor,
  StatusError,
  type WatchEvent,
  type WatchOptions,
} from "@reconcile/api";
import type { Client, ResourceClient } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import { type Fault, type FaultInjector, writeVerbs } from "./faults.js";
import type { Trace } from "./trace.js";

/** What a component's client shares with the simulation. */
export interface ClientHost {
  readonly clock: Clock;
  readonly trace: Trace;
  readonly faults: FaultInjector;
  /** Virtual ms since the run started. */
  elapsed(): number;
  /** A write was applied (for the steady-state check, and the leader check of `component`'s writes to `resource`). */
  wrote(component?: string, resource?: string): void;
  /** The component dies now and restarts after `restartAfterMs`. */
  crash(component: string, restartAfterMs: number): void;
}

/** Counters that outlive incarnations: decision points keep counting across restarts. */
export interface ComponentCounters {
  calls: number;
  events: number;
  starts: number;
  containers: number;
}

/** One incarnation's state: dead once crashed or stopped, and which watches must relist. */
export interface Incarnation {
  readonly component: string;
  readonly number: number;
  readonly signal: AbortSignal;
  dead: boolean;
  /** Resources whose next watch is answered 410 Expired (after a cut). */
  readonly expireNextWatch: Set<string>;
  /** Resources whose first list is answered from an older resourceVersion, by how many versions back. */
  readonly staleLists: Map<string, number>;
  /** staleRestart's depth, for every resource's first list; undefined when none struck. */
  staleDepth: number | undefined;
}

/** A fresh incarnation of `component`, alive. */
export function newIncarnation(component: string, number: number, signal: AbortSignal): Incarnation {
  return {
    component,
    number,
    signal,
    dead: false,
    expireNextWatch: new Set(),
    staleLists: new Map(),
    staleDepth: undefined,
  };
}

/**
 * A component's door to the API server: every call and answer is traced,
 * and faults strike at its decision points. Once its incarnation is dead
 * (crashed or stopped) every call fails as a connection error would.
 */
export class ComponentClient implements Client {
  readonly #host: ClientHost;
  readonly #inner: Client;
  readonly #counters: ComponentCounters;
  readonly incarnation: Incarnation;
  readonly #withFaults: boolean;

  /** @param withFaults whether faults strike this client (the test's own client is free of them). */
  constructor(
    host: ClientHost,
    inner: Client,
    counters: ComponentCounters,
    incarnation: Incarnation,
    withFaults: boolean,
  ) {
    this.#withFaults = withFaults;
    this.#host = host;
    this.#inner = inner;
    this.#counters = counters;
    this.incarnation = incarnation;
  }

  /** Discovery (the namespace controller's, the garbage collector's): the embedded server's table, read as the component would. */
  serverResources(): readonly { resource: ResourceDescriptor; verbs: readonly string[] }[] {
    this.#alive();
    const served = (
      this.#inner as Partial<{
        serverResources(): readonly { resource: ResourceDescriptor; verbs: readonly string[] }[];
      }>
    ).serverResources;
    if (served === undefined) throw new Error("the simulated API server offers no discovery");
    this.#host.trace.add({
      t: this.#host.elapsed(),
      type: "call",
      component: this.incarnation.component,
      index: -1,
      verb: "discovery",
      resource: "",
      target: "",
      code: 200,
    });
    return served.call(this.#inner);
  }

  /** The scheduler's bind (`pods/binding`), traced and faulted as a create of that subresource. */
  bindPod(
    namespace: string,
    binding: unknown,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<void> {
    const inner = this.#inner as Partial<{
      bindPod(
        namespace: string,
        binding: unknown,
        options: { signal?: AbortSignal | undefined },
      ): Promise<void>;
    }>;
    if (inner.bindPod === undefined) throw new Error("the simulated API server offers no pods/binding");
    const name = (binding as { metadata?: { name?: string } } | undefined)?.metadata?.name ?? "";
    return this.#call(
      "create",
      "pods/binding",
      `${namespace}/${name}`,
      () => inner.bindPod!.call(this.#inner, namespace, binding, options),
      () => undefined,
    );
  }

  resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T> {
    const inner = this.#inner.resource(resource, namespace);
    const name = resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
    const scope = namespace === undefined ? "" : `${namespace}/`;
    const targetOf = (n: string | undefined, object?: DeepReadonly<KubeObject> | KubeObject) =>
      n === undefined
        ? scope
        : `${namespace ?? object?.metadata?.namespace ?? ""}${resource.namespaced ? "/" : ""}${n}`.replace(
            /^\//,
            "",
          );
    const call = <R>(
      verb: string,
      target: string,
      run: () => Promise<R>,
      rvOf: (r: R) => string | undefined,
      answered?: (r: R) => string,
    ) => this.#call(verb, name, target, run, rvOf, answered);
    const objectRv = (o: KubeObject) => o.metadata?.resourceVersion;
    const client: ResourceClient<T> = {
      resource,
      namespace,
      list: (options?: ListOptions) =>
        call(
          "list",
          scope,
          () => this.#list(inner, name, options),
          (l: ObjectList<T>) => l.metadata?.resourceVersion,
        ),
      watch: (options?: WatchOptions) => this.#watch(inner, name, scope, options),
      get: (n, options) => call("get", targetOf(n), () => inner.get(n, options), objectRv),
      create: (object, options) =>
        call(
          "create",
          targetOf(object.metadata?.name ?? `${object.metadata?.generateName ?? ""}*`, object),
          () => inner.create(object, options),
          objectRv,
          (created) => targetOf(created.metadata?.name, created),
        ),
      update: (object, options) =>
        call(
          options?.subresource ? `update/${options.subresource}` : "update",
          targetOf(object.metadata?.name, object),
          () => inner.update(object, options),
          objectRv,
        ),
      updateStatus: (object, options) =>
        call(
          "updateStatus",
          targetOf(object.metadata?.name, object),
          () => inner.updateStatus(object, options),
          objectRv,
        ),
      patch: (n, patch, options) =>
        call(
          options.subresource ? `patch/${options.subresource}` : "patch",
          targetOf(n),
          () => inner.patch(n, patch, options),
          objectRv,
        ),
      delete: (n, options) =>
        call(
          "delete",
          targetOf(n),
          () => inner.delete(n, options),
          (r) => (r.kind === "object" ? r.object.metadata?.resourceVersion : undefined),
        ),
      deleteCollection: (options) =>
        call(
          "deleteCollection",
          scope,
          () => inner.deleteCollection(options),
          (l) => l.metadata?.resourceVersion,
        ),
      getScale: (n, options) =>
        call(
          "get/scale",
          targetOf(n),
          () => inner.getScale(n, options),
          (s) => s.metadata?.resourceVersion,
        ),
      updateScale: (n, scale, options) =>
        call(
          "updateScale",
          targetOf(n),
          () => inner.updateScale(n, scale, options),
          (s) => s.metadata?.resourceVersion,
        ),
    };
    if (inner.finalize !== undefined) {
      client.finalize = (object, options) =>
        call(
          "finalize",
          targetOf(object.metadata?.name, object),
          () => inner.finalize!(object, options),
          objectRv,
        );
    }
    return client;
  }

  async #call<R>(
    verb: string,
    resource: string,
    target: string,
    run: () => Promise<R>,
    rvOf: (result: R) => string | undefined,
    answered?: (result: R) => string,
  ): Promise<R> {
    const host = this.#host;
    const component = this.incarnation.component;
    this.#alive();
    const baseVerb = verb.split("/")[0]!;
    const index = this.#counters.calls++;
    const fault = this.#decide("call", index, baseVerb);
    if (fault !== undefined)
      host.trace.add({ t: host.elapsed(), type: "fault", fault, on: `${verb} ${resource} ${target}` });
    const refused = fault === undefined ? undefined : refusal(fault, resource, target);
    if (refused !== undefined) {
      this.#traceCall(index, verb, resource, target, refused);
      throw refused;
    }
    let result: R;
    try {
      result = await run();
    } catch (error) {
      this.#traceCall(index, verb, resource, target, error);
      throw error;
    }
    const write = writeVerbs.has(baseVerb);
    if (write) host.wrote(component, resource);
    const named = answered?.(result) ?? target;
    host.trace.add({
      t: host.elapsed(),
      type: "call",
      component,
      index,
      verb,
      resource,
      target: named,
      code: 200,
      rv: rvOf(result),
      owner: controllerOwnerOf(result),
    });
    if (fault?.kind === "lostResponse") {
      throw newServiceUnavailable(
        `unable to reach the API server: read ECONNRESET (the ${verb} was applied)`,
      );
    }
    if (fault?.kind === "crashAfterWrite") {
      host.crash(component, fault.amount ?? 1_000);
      throw lostConnection();
    }
    return result;
  }

  async #list<T extends KubeObject>(
    inner: ResourceClient<T>,
    resource: string,
    options: ListOptions | undefined,
  ): Promise<ObjectList<T>> {
    const fresh = await inner.list(options);
    const depth = this.incarnation.staleDepth;
    // Only a list at resourceVersion 0 may be served from a cache (what informers ask for); a
    // list at "" is a consistent read.
    if (depth === undefined || options?.resourceVersion !== "0" || this.incarnation.staleLists.has(resource))
      return fresh;
    // The first list of each resource after a stale restart: the state some versions ago, as a
    // lagging watch cache would answer a list at resourceVersion 0.
    this.incarnation.staleLists.set(resource, depth);
    const now = Number(fresh.metadata?.resourceVersion ?? 0);
    const older = Math.max(1, now - depth);
    if (!(older < now)) return fresh;
    try {
      return await inner.list({ ...options, resourceVersion: String(older), resourceVersionMatch: "Exact" });
    } catch {
      return fresh;
    }
  }

  async #watch<T extends KubeObject>(
    inner: ResourceClient<T>,
    resource: string,
    scope: string,
    options: WatchOptions | undefined,
  ): Promise<AsyncIterable<WatchEvent<T>>> {
    const host = this.#host;
    const incarnation = this.incarnation;
    const component = incarnation.component;
    this.#alive();
    const index = this.#counters.calls++;
    const fault = this.#decide("call", index, "watch");
    if (fault !== undefined)
      host.trace.add({ t: host.elapsed(), type: "fault", fault, on: `watch ${resource} ${scope}` });
    const refused = fault === undefined ? undefined : refusal(fault, resource, scope);
    if (refused !== undefined) {
      this.#traceCall(index, "watch", resource, scope, refused);
      throw refused;
    }
    if (incarnation.expireNextWatch.delete(resource)) {
      const expired = newResourceExpired(
        `too old resource version: ${options?.resourceVersion ?? ""} (the watch was cut)`,
      );
      this.#traceCall(index, "watch", resource, scope, expired);
      throw expired;
    }
    const stop = new AbortController();
    const outer = options?.signal;
    const abort = () => stop.abort();
    outer?.addEventListener("abort", abort, { once: true });
    incarnation.signal.addEventListener("abort", abort, { once: true });
    if (outer?.aborted || incarnation.signal.aborted) stop.abort();
    let stream: AsyncIterable<WatchEvent<T>>;
    try {
      stream = await inner.watch({ ...options, signal: stop.signal });
    } catch (error) {
      this.#traceCall(index, "watch", resource, scope, error);
      throw error;
    }
    host.trace.add({
      t: host.elapsed(),
      type: "call",
      component,
      index,
      verb: "watch",
      resource,
      target: scope,
      code: 200,
      rv: options?.resourceVersion,
    });
    const lag = fault?.kind === "watchDelay" ? (fault.amount ?? 0) : 0;
    const cleanup = () => {
      outer?.removeEventListener("abort", abort);
      incarnation.signal.removeEventListener("abort", abort);
      stop.abort();
    };
    const events = lag > 0 ? delayed(stream, lag, host.clock, stop.signal) : stream;
    return this.#delivered(events, resource, cleanup);
  }

  async *#delivered<T extends KubeObject>(
    events: AsyncIterable<WatchEvent<T>>,
    resource: string,
    cleanup: () => void,
  ): AsyncGenerator<WatchEvent<T>> {
    const host = this.#host;
    const incarnation = this.incarnation;
    const component = incarnation.component;
    try {
      for await (const event of events) {
        if (incarnation.dead) return;
        if (event.type === "BOOKMARK" || event.type === "ERROR") {
          yield event;
          continue;
        }
        const index = this.#counters.events++;
        const fault = this.#decide("event", index, "watch");
        if (fault !== undefined) {
          const meta = event.object.metadata;
          const target = meta?.namespace ? `${meta.namespace}/${meta.name}` : (meta?.name ?? "");
          host.trace.add({
            t: host.elapsed(),
            type: "fault",
            fault,
            on: `watch ${resource}, before ${event.type} ${target}`,
          });
          incarnation.expireNextWatch.add(resource);
          return;
        }
        const meta = event.object.metadata;
        host.trace.add({
          t: host.elapsed(),
          type: "event",
          component,
          index,
          resource,
          event: event.type,
          target: meta?.namespace ? `${meta.namespace}/${meta.name}` : (meta?.name ?? ""),
          rv: meta?.resourceVersion ?? "",
        });
        yield event;
      }
    } finally {
      cleanup();
    }
  }

  #traceCall(index: number, verb: string, resource: string, target: string, error: unknown): void {
    const status = error instanceof StatusError ? error.status : undefined;
    this.#host.trace.add({
      t: this.#host.elapsed(),
      type: "call",
      component: this.incarnation.component,
      index,
      verb,
      resource,
      target,
      code: status?.code ?? 0,
      reason: status?.reason ?? (error instanceof Error ? error.message : String(error)),
    });
  }

  #decide(point: "call" | "event", index: number, verb: string): Fault | undefined {
    if (!this.#withFaults) return undefined;
    return this.#host.faults.decide(this.incarnation.component, point, index, verb);
  }

  #alive(): void {
    if (this.incarnation.dead) throw lostConnection();
  }
}

/** The error a refusing fault answers with; undefined for faults that let the request through. */
function refusal(fault: Fault, resource: string, target: string): StatusError | undefined {
  const gr = {
    group: resource.includes(".") ? resource.slice(resource.indexOf(".") + 1) : "",
    resource: resource.split(".")[0]!,
  };
  switch (fault.kind) {
    case "serverError":
      return newInternalError(new Error("etcdserver: leader changed"));
    case "unavailable":
      return newServiceUnavailable("the server is currently unable to handle the request");
    case "tooManyRequests":
      return newTooManyRequests(
        "the server has received too many requests and has asked us to try again later",
        1,
      );
    case "conflict":
      return newConflict(gr, target.split("/").pop() ?? "");
    case "timeout":
      return newTimeout(
        "the server was unable to return a response in the time allotted, but may still be processing the request",
        1,
      );
    default:
      return undefined;
  }
}

function lostConnection(): StatusError {
  return newServiceUnavailable("unable to reach the API server: the component has stopped");
}

/**
 * The events of `stream`, each delivered `lag` ms after it arrived (order
 * kept): a watch whose events reach this component late.
 */
async function* delayed<T>(
  stream: AsyncIterable<T>,
  lag: number,
  clock: Clock,
  signal: AbortSignal,
): AsyncGenerator<T> {
  const pending: { due: number; value: T }[] = [];
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  signal.addEventListener("abort", notify, { once: true });
  // Ends with the stream, which ends when the caller's signal aborts.
  void (async () => {
    try {
      for await (const value of stream) {
        pending.push({ due: clock.now() + lag, value });
        notify();
      }
    } catch (error) {
      failure = error;
    } finally {
      ended = true;
      notify();
    }
  })();
  try {
    for (;;) {
      const next = pending[0];
      if (next !== undefined && next.due <= clock.now()) {
        pending.shift();
        yield next.value;
        continue;
      }
      if ((next === undefined && ended) || signal.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = next === undefined ? undefined : clock.setTimeout(notify, next.due - clock.now());
        wake = () => {
          if (timer !== undefined) clock.clearTimeout(timer);
          resolve();
        };
      });
    }
    if (failure !== undefined && !signal.aborted) throw failure;
  } finally {
    signal.removeEventListener("abort", notify);
  }
}

/** `namespace/name` of a written object's controller (its owner reference with `controller: true`), if any. */
function controllerOwnerOf(result: unknown): string | undefined {
  const meta = (result as KubeObject | undefined)?.metadata;
  const owner = meta?.ownerReferences?.find((ref) => ref.controller === true);
  if (owner === undefined) return undefined;
  return meta?.namespace ? `${meta.namespace}/${owner.name}` : owner.name;
}
