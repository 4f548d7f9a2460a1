import type { KubeObject, ResourceDescriptor } from "@reconcile/api";
import type { Client, ResourceClient } from "@reconcile/client";

/** A single-object call passing through an {@link InterceptingClient}. */
export interface InterceptedCall {
  verb: "get" | "create" | "update";
  resource: ResourceDescriptor;
  namespace: string | undefined;
  name: string;
  /** The object sent (create, update). */
  object?: unknown;
  /** The call's signal: a hung call should reject when it aborts. */
  signal: AbortSignal | undefined;
}

/**
 * Decides what a call does: pass it on (`next()`), answer it without the
 * server, fail it, delay it before or after `next()` (the latter is a write
 * that lands but whose answer comes late), or hang until `call.signal` aborts.
 */
export type Interceptor = (call: InterceptedCall, next: () => Promise<unknown>) => Promise<unknown>;

/**
 * Wraps a `Client` so that get, create and update go through an interceptor:
 * how tests inject failures, latency, conflicts and partitions. Other calls
 * pass straight through.
 */
export class InterceptingClient implements Client {
  readonly #inner: Client;
  readonly #interceptor: Interceptor;

  constructor(inner: Client, interceptor: Interceptor) {
    this.#inner = inner;
    this.#interceptor = interceptor;
  }

  resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T> {
    const inner = this.#inner.resource(resource, namespace);
    const intercept = this.#interceptor;
    const base = { resource: resource as ResourceDescriptor, namespace };
    return {
      resource: inner.resource,
      namespace: inner.namespace,
      get: (name, options) =>
        intercept({ ...base, verb: "get", name, signal: options?.signal }, () =>
          inner.get(name, options),
        ) as Promise<T>,
      create: (object, options) =>
        intercept(
          { ...base, verb: "create", name: object.metadata?.name ?? "", object, signal: options?.signal },
          () => inner.create(object, options),
        ) as Promise<T>,
      update: (object, options) =>
        intercept(
          { ...base, verb: "update", name: object.metadata?.name ?? "", object, signal: options?.signal },
          () => inner.update(object, options),
        ) as Promise<T>,
      list: (options) => inner.list(options),
      watch: (options) => inner.watch(options),
      updateStatus: (object, options) => inner.updateStatus(object, options),
      patch: (name, patch, options) => inner.patch(name, patch, options),
      delete: (name, options) => inner.delete(name, options),
      deleteCollection: (options) => inner.deleteCollection(options),
      getScale: (name, options) => inner.getScale(name, options),
      updateScale: (name, scale, options) => inner.updateScale(name, scale, options),
    };
  }
}
