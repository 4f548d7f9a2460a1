import {
  type DeepReadonly,
  type KubeObject,
  type ListOptions,
  newInternalError,
  type ObjectList,
  type ResourceDescriptor,
  type Scale,
  StatusError,
  type WatchEvent,
  type WatchOptions,
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
import { copyJson } from "../json.js";
import type { Registry } from "./registry.js";

/**
 * The `Client` of an embedded server: every call runs the registry code the
 * HTTP server runs, without HTTP. Objects go in and come out as copies, so no
 * caller can change what the server stores. Failures are `StatusError`s; an
 * aborted signal rejects with the signal's reason, as `fetch` does.
 */
export class InProcessClient implements Client {
  readonly #registry: Registry;

  constructor(registry: Registry) {
    this.#registry = registry;
  }

  resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T> {
    return new InProcessResourceClient<T>(
      this.#registry,
      resource,
      resource.namespaced ? namespace : undefined,
    );
  }

  /**
   * The resources this server serves, with their verbs, as discovery lists
   * them (custom kinds included), for controllers that act on every kind
   * (the namespace controller).
   */
  serverResources(): { resource: ResourceDescriptor; verbs: string[] }[] {
    return this.#registry.definitions
      .list()
      .map((definition) => ({ resource: definition.descriptor, verbs: [...definition.verbs] }));
  }

  /**
   * Posts a core/v1 Binding to `pods/{name}/binding` (client-go's
   * `Pods(namespace).Bind`), which the `Client` interface has no call for:
   * sets the pod's `spec.nodeName` and `PodScheduled=True` in one write.
   */
  async bindPod(namespace: string, binding: unknown, options: WriteOptions = {}): Promise<void> {
    const { signal } = options;
    signal?.throwIfAborted();
    const name = nameOf(binding);
    try {
      await this.#registry.bindPod(namespace, name, copyJson(binding), { dryRun: options.dryRun });
    } catch (error) {
      throw StatusError.isInstance(error) ? error : newInternalError(error);
    }
    signal?.throwIfAborted();
  }
}

class InProcessResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly resource: ResourceDescriptor<T>;
  readonly namespace: string | undefined;
  readonly #registry: Registry;

  constructor(registry: Registry, resource: ResourceDescriptor<T>, namespace: string | undefined) {
    this.#registry = registry;
    this.resource = resource;
    this.namespace = namespace;
  }

  list(options: ListOptions = {}): Promise<ObjectList<T>> {
    return this.#call(options.signal, async () => {
      const list = await this.#registry.list(this.resource, this.namespace, options);
      const items = new Array<T>(list.items.length);
      for (let i = 0; i < items.length; i++) {
        // Copying a long list takes a while: let the event loop breathe between chunks.
        if (i > 0 && i % yieldEvery === 0) await new Promise<void>((resolve) => setImmediate(resolve));
        items[i] = copyJson(list.items[i]) as T;
      }
      return { ...list, metadata: { ...list.metadata }, items };
    });
  }

  watch(options: WatchOptions = {}): Promise<AsyncIterable<WatchEvent<T>>> {
    return this.#call(options.signal, async () => {
      const watch = await this.#registry.watch(this.resource, this.namespace, options);
      const iterator = watch[Symbol.asyncIterator]();
      // Each event is copied when it is read, so an event nobody reads costs nothing.
      const copying: AsyncIterableIterator<WatchEvent<T>> = {
        next: () =>
          iterator
            .next()
            .then((next) =>
              next.done ? next : { done: false, value: copyJson(next.value) as WatchEvent<T> },
            ),
        return: () => {
          watch.stop();
          return Promise.resolve({ done: true, value: undefined });
        },
        [Symbol.asyncIterator]() {
          return this;
        },
      };
      return copying;
    });
  }

  get(name: string, options: GetOptions = {}): Promise<T> {
    return this.#call(
      options.signal,
      async () =>
        copyJson(
          await this.#registry.get(this.resource, this.namespace, name, { subresource: options.subresource }),
        ) as T,
    );
  }

  create(object: T | DeepReadonly<T>, options: WriteOptions = {}): Promise<T> {
    return this.#call(
      options.signal,
      async () => copyJson(await this.#registry.create(this.resource, this.namespace, object, options)) as T,
    );
  }

  update(object: T | DeepReadonly<T>, options: UpdateOptions = {}): Promise<T> {
    return this.#call(
      options.signal,
      async () =>
        copyJson(
          await this.#registry.update(
            this.resource,
            this.#namespaceOf(object),
            nameOf(object),
            object,
            options,
          ),
        ) as T,
    );
  }

  updateStatus(object: T | DeepReadonly<T>, options: WriteOptions = {}): Promise<T> {
    return this.#call(
      options.signal,
      async () =>
        copyJson(
          await this.#registry.update(this.resource, this.#namespaceOf(object), nameOf(object), object, {
            ...options,
            subresource: "status",
          }),
        ) as T,
    );
  }

  finalize(object: T | DeepReadonly<T>, options: WriteOptions = {}): Promise<T> {
    return this.#call(
      options.signal,
      async () =>
        copyJson(
          await this.#registry.update(this.resource, this.#namespaceOf(object), nameOf(object), object, {
            ...options,
            subresource: "finalize",
          }),
        ) as T,
    );
  }

  patch(name: string, patch: unknown, options: PatchOptions): Promise<T> {
    return this.#call(
      options.signal,
      async () =>
        copyJson(
          await this.#registry.patch(this.resource, this.namespace, name, options.type, patch, options),
        ) as T,
    );
  }

  delete(name: string, options: DeleteOptions = {}): Promise<DeleteResult<T>> {
    return this.#call(options.signal, async () => {
      const object = await this.#registry.delete(this.resource, this.namespace, name, options);
      return { kind: "object", object: copyJson(object) as T };
    });
  }

  deleteCollection(options: DeleteCollectionOptions = {}): Promise<ObjectList<T>> {
    return this.#call(options.signal, async () => {
      const list = await this.#registry.deleteCollection(this.resource, this.namespace, options);
      return copyJson(list) as ObjectList<T>;
    });
  }

  getScale(name: string, options: CallOptions = {}): Promise<Scale> {
    return this.#call(options.signal, async () =>
      copyJson(await this.#registry.getScale(this.resource, this.namespace, name)),
    );
  }

  updateScale(name: string, scale: Scale, options: WriteOptions = {}): Promise<Scale> {
    return this.#call(options.signal, async () =>
      copyJson(await this.#registry.updateScale(this.resource, this.namespace, name, scale, options)),
    );
  }

  /** The namespace of a single-object write: the client's, else the object's own. */
  #namespaceOf(object: T | DeepReadonly<T>): string | undefined {
    return this.namespace ?? (object as KubeObject)?.metadata?.namespace;
  }

  /** Runs a call: rejects at once if the signal has aborted, and turns any other failure into a StatusError. */
  async #call<R>(signal: AbortSignal | undefined, run: () => Promise<R>): Promise<R> {
    signal?.throwIfAborted();
    try {
      const result = await run();
      signal?.throwIfAborted();
      return result;
    } catch (error) {
      if (signal?.aborted && error === signal.reason) throw error;
      throw StatusError.isInstance(error) ? error : newInternalError(error);
    }
  }
}

/** How many list items are copied between two turns of the event loop. */
const yieldEvery = 2000;

function nameOf(object: unknown): string {
  const name = (object as KubeObject | undefined)?.metadata?.name;
  return typeof name === "string" ? name : "";
}
