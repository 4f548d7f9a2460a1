import {
  type DeepReadonly,
  deepFreeze,
  type KubeObject,
  type ListOptions,
  newInternalError,
  type ObjectList,
  pods,
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
import type { AdmissionUser } from "./admission.js";
import type { Registry } from "./registry.js";
import type { DryRunOption } from "./store/request-options.js";

/** One call of an in-process client, as an authorizer sees it (upstream's request attributes). */
export interface InProcessRequest {
  verb: string;
  resource: ResourceDescriptor;
  subresource: string;
  /** "" for cluster-scoped resources and calls across all namespaces. */
  namespace: string;
  /** "" for collections and creates. */
  name: string;
  /** The list's or watch's field selector, as given. */
  fieldSelector?: string | undefined;
}

/**
 * Who an in-process client acts as: its calls are authorized as that user
 * and its writes reach admission with it, as the same calls over HTTP with
 * that user's credentials would.
 */
/**
 * Answers a create of a kind that nothing stores (the access and token
 * reviews) as `user` (undefined: the server's own client), or returns
 * undefined for every other resource. `body` is the caller's object: it is
 * copied before it is read.
 */
export type ReviewAnswerer = (
  resource: ResourceDescriptor,
  namespace: string | undefined,
  body: unknown,
  user: AdmissionUser | undefined,
) => Promise<unknown> | undefined;

export interface InProcessIdentity {
  readonly user: AdmissionUser;
  /** Rejects with the 403 when the user may not make the request. */
  authorize(request: InProcessRequest): Promise<void> | void;
  /** A last check of a write, for the kinds that need one (RBAC's escalation check). */
  admit?(resource: ResourceDescriptor): DryRunOption["admit"];
}

/**
 * The `Client` of an embedded server: every call runs the registry code the
 * HTTP server runs, without HTTP. Objects go in and come out as copies, so no
 * caller can change what the server stores. Failures are `StatusError`s; an
 * aborted signal rejects with the signal's reason, as `fetch` does.
 *
 * Without an identity it is the server's own trusted client (kube-apiserver's
 * loopback client); with one, every call is authorized as that user.
 */
export class InProcessClient implements Client {
  readonly #registry: Registry;
  readonly #identity: InProcessIdentity | undefined;
  readonly #reviews: ReviewAnswerer | undefined;
  readonly #userAgent: string | undefined;
  readonly #copy: <V>(value: V) => V;

  /**
   * `userAgent` names the field manager of writes without `fieldManager`, as
   * a request's User-Agent does. `shared` hands out objects as the server
   * holds them, uncopied: only for a caller that copies them at once itself
   * (`servePort` posting them to another thread) and never changes them.
   */
  constructor(
    registry: Registry,
    identity?: InProcessIdentity,
    reviews?: ReviewAnswerer,
    userAgent?: string,
    shared = false,
  ) {
    this.#registry = registry;
    this.#identity = identity;
    this.#reviews = reviews;
    this.#userAgent = userAgent;
    this.#copy = shared ? (value) => value : (value) => copyJson(value);
  }

  resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T> {
    return new InProcessResourceClient<T>(
      this.#registry,
      resource,
      resource.namespaced ? namespace : undefined,
      this.#identity,
      this.#reviews,
      this.#userAgent,
      this.#copy,
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
      const identity = this.#identity;
      await identity?.authorize({ verb: "create", resource: pods, subresource: "binding", namespace, name });
      await this.#registry.bindPod(namespace, name, copyJson(binding), {
        dryRun: options.dryRun,
        user: identity?.user,
      });
    } catch (error) {
      throw StatusError.isInstance(error) ? error : newInternalError(error);
    }
    signal?.throwIfAborted();
  }
}

/**
 * The frozen copy of each object the server handed out to callers that accept
 * frozen objects, made on first use and kept as long as the server holds the
 * object: an informer per component then costs one copy of each object and
 * event between them, not one each.
 */
const frozenCopies = new WeakMap<object, unknown>();

function frozenCopyOf<V>(value: V): V {
  if (value === null || typeof value !== "object") return value;
  let frozen = frozenCopies.get(value);
  if (frozen === undefined) {
    frozen = deepFreeze(copyJson(value));
    frozenCopies.set(value, frozen);
  }
  return frozen as V;
}

class InProcessResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly resource: ResourceDescriptor<T>;
  readonly namespace: string | undefined;
  readonly #registry: Registry;
  readonly #identity: InProcessIdentity | undefined;
  readonly #reviews: ReviewAnswerer | undefined;
  readonly #userAgent: string | undefined;
  /** How an object leaves: copied, or as the server holds it (see `InProcessClient`'s `shared`). */
  readonly #copy: <V>(value: V) => V;

  constructor(
    registry: Registry,
    resource: ResourceDescriptor<T>,
    namespace: string | undefined,
    identity: InProcessIdentity | undefined,
    reviews: ReviewAnswerer | undefined,
    userAgent: string | undefined,
    copy: <V>(value: V) => V,
  ) {
    this.#copy = copy;
    this.#registry = registry;
    this.resource = resource;
    this.namespace = namespace;
    this.#identity = identity;
    this.#reviews = reviews;
    this.#userAgent = userAgent;
  }

  list(options: ListOptions = {}): Promise<ObjectList<T>> {
    return this.#call(options.signal, async () => {
      if (this.#identity !== undefined) await this.#authorize("list", "", "", options.fieldSelector);
      const list = await this.#registry.list(this.resource, this.namespace, options);
      const copy = this.#handOut(options);
      const items = new Array<T>(list.items.length);
      for (let i = 0; i < items.length; i++) {
        // Copying a long list takes a while: let the event loop breathe between chunks.
        if (i > 0 && i % yieldEvery === 0) await new Promise<void>((resolve) => setImmediate(resolve));
        items[i] = copy(list.items[i]) as T;
      }
      return { ...list, metadata: { ...list.metadata }, items };
    });
  }

  watch(options: WatchOptions = {}): Promise<AsyncIterable<WatchEvent<T>>> {
    return this.#call(options.signal, async () => {
      if (this.#identity !== undefined) await this.#authorize("watch", "", "", options.fieldSelector);
      const watch = await this.#registry.watch(this.resource, this.namespace, options);
      const iterator = watch[Symbol.asyncIterator]();
      const copy = this.#handOut(options);
      // Each event is copied when it is read, so an event nobody reads costs nothing.
      const copying: AsyncIterableIterator<WatchEvent<T>> = {
        next: () =>
          iterator.next().then((next) => {
            if (next.done) return next;
            const event = next.value;
            return { done: false, value: { type: event.type, object: copy(event.object) } as WatchEvent<T> };
          }),
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

  /**
   * How this call's objects leave: as the client's `#copy` does, or, for a
   * caller that accepts them frozen, as one frozen copy of each stored object
   * that every such caller shares.
   */
  #handOut(options: { acceptFrozen?: boolean | undefined }): <V>(value: V) => V {
    return options.acceptFrozen === true ? frozenCopyOf : this.#copy;
  }

  get(name: string, options: GetOptions = {}): Promise<T> {
    return this.#call(options.signal, async () => {
      if (this.#identity !== undefined) await this.#authorize("get", name, options.subresource ?? "");
      return this.#copy(
        await this.#registry.get(this.resource, this.namespace, name, { subresource: options.subresource }),
      ) as T;
    });
  }

  create(object: T | DeepReadonly<T>, options: WriteOptions = {}): Promise<T> {
    return this.#call(options.signal, async () => {
      const namespace = this.#namespaceOf(object);
      if (this.#identity !== undefined) await this.#authorize("create", "", "", undefined, namespace);
      const review = this.#reviews?.(this.resource, namespace, object, this.#identity?.user);
      if (review !== undefined) return (await review) as T;
      return this.#copy(
        await this.#registry.create(this.resource, this.namespace, object, this.#write(options)),
      ) as T;
    });
  }

  update(object: T | DeepReadonly<T>, options: UpdateOptions = {}): Promise<T> {
    return this.#updateAt(object, options, "");
  }

  updateStatus(object: T | DeepReadonly<T>, options: WriteOptions = {}): Promise<T> {
    return this.#updateAt(object, options, "status");
  }

  finalize(object: T | DeepReadonly<T>, options: WriteOptions = {}): Promise<T> {
    return this.#updateAt(object, options, "finalize");
  }

  /** A PUT of `object` to the main resource (`""`) or to one of its subresources. */
  #updateAt(object: T | DeepReadonly<T>, options: WriteOptions, subresource: string): Promise<T> {
    return this.#call(options.signal, async () => {
      const namespace = this.#namespaceOf(object);
      if (this.#identity !== undefined)
        await this.#authorize("update", nameOf(object), subresource, undefined, namespace);
      return this.#copy(
        await this.#registry.update(
          this.resource,
          namespace,
          nameOf(object),
          object,
          this.#write(options, subresource || undefined),
        ),
      ) as T;
    });
  }

  patch(name: string, patch: unknown, options: PatchOptions): Promise<T> {
    return this.#call(options.signal, async () => {
      if (this.#identity !== undefined) await this.#authorize("patch", name, options.subresource ?? "");
      return this.#copy(
        await this.#registry.patch(
          this.resource,
          this.namespace,
          name,
          options.type,
          patch,
          this.#write(options),
        ),
      ) as T;
    });
  }

  delete(name: string, options: DeleteOptions = {}): Promise<DeleteResult<T>> {
    return this.#call(options.signal, async () => {
      if (this.#identity !== undefined) await this.#authorize("delete", name, "");
      const object = await this.#registry.delete(this.resource, this.namespace, name, this.#write(options));
      return { kind: "object", object: this.#copy(object) as T };
    });
  }

  deleteCollection(options: DeleteCollectionOptions = {}): Promise<ObjectList<T>> {
    return this.#call(options.signal, async () => {
      if (this.#identity !== undefined)
        await this.#authorize("deletecollection", "", "", options.fieldSelector);
      const list = await this.#registry.deleteCollection(this.resource, this.namespace, this.#write(options));
      return this.#copy(list) as ObjectList<T>;
    });
  }

  getScale(name: string, options: CallOptions = {}): Promise<Scale> {
    return this.#call(options.signal, async () => {
      if (this.#identity !== undefined) await this.#authorize("get", name, "scale");
      return this.#copy(await this.#registry.getScale(this.resource, this.namespace, name));
    });
  }

  updateScale(name: string, scale: Scale, options: WriteOptions = {}): Promise<Scale> {
    return this.#call(options.signal, async () => {
      if (this.#identity !== undefined) await this.#authorize("update", name, "scale");
      return this.#copy(
        await this.#registry.updateScale(this.resource, this.namespace, name, scale, this.#write(options)),
      );
    });
  }

  /** Authorizes one call as the identity's user (nothing to do for the server's own client). */
  #authorize(
    verb: string,
    name: string,
    subresource: string,
    fieldSelector?: string,
    namespace = this.namespace,
  ): Promise<void> | void {
    return this.#identity?.authorize({
      verb,
      resource: this.resource,
      subresource,
      namespace: namespace ?? "",
      name,
      fieldSelector,
    });
  }

  /** A write's options with the identity's user (and its last check) and the client's User-Agent added. */
  #write<O extends WriteOptions>(
    options: O,
    subresource?: string,
  ): O & Pick<DryRunOption, "user" | "admit"> & { userAgent?: string; subresource?: string } {
    // Object.assign, not spreads: members added to a spread's copy cost V8 a new hidden class each time.
    const write: O & DryRunOption & { userAgent?: string; subresource?: string } = Object.assign({}, options);
    if (this.#userAgent !== undefined) write.userAgent = this.#userAgent;
    const identity = this.#identity;
    if (identity !== undefined) {
      write.user = identity.user;
      write.admit = identity.admit?.(this.resource);
    }
    if (subresource !== undefined) write.subresource = subresource;
    return write;
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
