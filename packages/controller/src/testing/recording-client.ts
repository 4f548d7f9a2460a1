import {
  apiVersionOf,
  type DeepReadonly,
  groupKindOf,
  groupResourceOf,
  jsonEqual,
  type KubeObject,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newInvalid,
  newMethodNotSupported,
  newNotFound,
  type ObjectList,
  type ResourceDescriptor,
  type Scale,
} from "@reconcile/api";
import type { Client, DeleteResult, PatchOptions, ResourceClient } from "@reconcile/client";

/** One call a {@link RecordingClient} received. */
export interface ClientAction {
  verb: "list" | "watch" | "get" | "create" | "update" | "updateStatus" | "patch" | "delete";
  /** The resource's plural, e.g. "pods". */
  resource: string;
  namespace: string;
  name: string;
  /** The object (create/update) or patch (patch) sent. */
  body?: unknown;
  patchType?: PatchOptions["type"];
}

/**
 * Decides a call before the store sees it: return an error to fail the call,
 * or undefined to let it through (client-go's fake clientset reactors).
 */
export type ClientReactor = (action: ClientAction) => Error | undefined;

/**
 * A small in-memory `Client` for unit tests of controllers: it stores objects,
 * records every call in `actions` (as client-go's fake clientset does) and
 * lets `reactors` fail chosen calls. It has no watch and no registry logic
 * beyond uids, resourceVersions, generateName and `metadata.uid` as a patch
 * precondition. Integration tests should use the embedded API server.
 */
export class RecordingClient implements Client {
  readonly actions: ClientAction[] = [];
  readonly reactors: ClientReactor[] = [];
  readonly #objects = new Map<string, KubeObject>();
  #resourceVersion = 0;
  #uid = 0;

  resource<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): ResourceClient<T> {
    return new RecordingResourceClient<T>(this, resource, namespace);
  }

  /** Puts an object into the store without recording an action. Returns the stored copy. */
  seed<T extends KubeObject>(resource: ResourceDescriptor<T>, object: T): T {
    return structuredClone(this.write(resource, structuredClone(object))) as T;
  }

  /** The stored object, or undefined. */
  peek<T extends KubeObject>(
    resource: ResourceDescriptor<T>,
    namespace: string,
    name: string,
  ): T | undefined {
    const found = this.#objects.get(storeKey(resource, namespace, name));
    return found === undefined ? undefined : (structuredClone(found) as T);
  }

  /** The actions with this verb (and resource, if given). */
  actionsOf(verb: ClientAction["verb"], resource?: string): ClientAction[] {
    return this.actions.filter((a) => a.verb === verb && (resource === undefined || a.resource === resource));
  }

  /** @internal */
  call(action: ClientAction): void {
    this.actions.push(action);
    for (const reactor of this.reactors) {
      const error = reactor(action);
      if (error !== undefined) throw error;
    }
  }

  /** @internal */
  store(resource: ResourceDescriptor, namespace: string): Map<string, KubeObject> {
    const prefix = `${resource.group}/${resource.plural}/${namespace}/`;
    const out = new Map<string, KubeObject>();
    for (const [key, value] of this.#objects) if (key.startsWith(prefix)) out.set(key, value);
    return out;
  }

  /** @internal */
  read(resource: ResourceDescriptor, namespace: string, name: string): KubeObject {
    const found = this.#objects.get(storeKey(resource, namespace, name));
    if (found === undefined) throw newNotFound(groupResourceOf(resource), name);
    return found;
  }

  /** @internal */
  write(resource: ResourceDescriptor, object: KubeObject): KubeObject {
    const meta = (object.metadata ??= {}) as Record<string, unknown>;
    meta.uid ??= `uid-${++this.#uid}`;
    meta.resourceVersion = String(++this.#resourceVersion);
    this.#objects.set(storeKey(resource, String(meta.namespace ?? ""), String(meta.name ?? "")), object);
    return structuredClone(object);
  }

  /** @internal */
  remove(resource: ResourceDescriptor, namespace: string, name: string): void {
    this.#objects.delete(storeKey(resource, namespace, name));
  }

  /** @internal */
  nextName(prefix: string): string {
    return `${prefix}${(++this.#uid).toString(36).padStart(5, "0")}`;
  }
}

class RecordingResourceClient<T extends KubeObject> implements ResourceClient<T> {
  readonly resource: ResourceDescriptor<T>;
  readonly namespace: string | undefined;
  readonly #owner: RecordingClient;

  constructor(owner: RecordingClient, resource: ResourceDescriptor<T>, namespace: string | undefined) {
    this.#owner = owner;
    this.resource = resource;
    this.namespace = namespace;
  }

  async list(): Promise<ObjectList<T>> {
    const namespace = this.namespace ?? "";
    this.#owner.call({ verb: "list", resource: this.resource.plural, namespace, name: "" });
    const items = [...this.#owner.store(this.resource, namespace).values()].map(
      (o) => structuredClone(o) as T,
    );
    return { metadata: {}, items };
  }

  async watch(): Promise<AsyncIterable<never>> {
    this.#owner.call({
      verb: "watch",
      resource: this.resource.plural,
      namespace: this.namespace ?? "",
      name: "",
    });
    throw newMethodNotSupported(groupResourceOf(this.resource), "watch");
  }

  async get(name: string): Promise<T> {
    const namespace = this.namespace ?? "";
    this.#owner.call({ verb: "get", resource: this.resource.plural, namespace, name });
    return structuredClone(this.#owner.read(this.resource, namespace, name)) as T;
  }

  async create(object: T | DeepReadonly<T>): Promise<T> {
    const copy = structuredClone(object) as T;
    const meta = (copy.metadata ??= {});
    const namespace = meta.namespace ?? this.namespace ?? "";
    meta.namespace = namespace;
    if (!meta.name && meta.generateName) meta.name = this.#owner.nextName(meta.generateName);
    const name = meta.name ?? "";
    this.#owner.call({ verb: "create", resource: this.resource.plural, namespace, name, body: copy });
    if (!name) throw newBadRequest("name or generateName is required");
    if (this.#owner.peek(this.resource, namespace, name) !== undefined) {
      throw newAlreadyExists(groupResourceOf(this.resource), name);
    }
    copy.apiVersion ??= apiVersionOf(this.resource);
    copy.kind ??= this.resource.kind;
    Object.assign(meta, { generation: 1 });
    return this.#owner.write(this.resource, copy) as T;
  }

  update(object: T | DeepReadonly<T>): Promise<T> {
    return this.#update("update", object);
  }

  updateStatus(object: T | DeepReadonly<T>): Promise<T> {
    return this.#update("updateStatus", object);
  }

  async #update(verb: "update" | "updateStatus", object: T | DeepReadonly<T>): Promise<T> {
    const copy = structuredClone(object) as T & { status?: unknown; spec?: unknown };
    const namespace = copy.metadata?.namespace ?? this.namespace ?? "";
    const name = copy.metadata?.name ?? "";
    this.#owner.call({ verb, resource: this.resource.plural, namespace, name, body: copy });
    const current = this.#owner.read(this.resource, namespace, name) as T & {
      status?: unknown;
      spec?: unknown;
    };
    const rv = copy.metadata?.resourceVersion;
    if (rv && rv !== current.metadata?.resourceVersion)
      throw newConflict(groupResourceOf(this.resource), name);
    const next = structuredClone(current);
    if (verb === "updateStatus") next.status = copy.status;
    else {
      const generation = current.metadata?.generation ?? 1;
      const specChanged = !jsonEqual(copy.spec, current.spec);
      Object.assign(next, copy, { status: current.status });
      next.metadata = {
        ...copy.metadata,
        ...(current.metadata?.uid ? { uid: current.metadata.uid } : {}),
        generation: generation + (specChanged ? 1 : 0),
      };
    }
    return this.#owner.write(this.resource, next) as T;
  }

  async patch(name: string, patch: unknown, options: PatchOptions): Promise<T> {
    const namespace = this.namespace ?? "";
    this.#owner.call({
      verb: "patch",
      resource: this.resource.plural,
      namespace,
      name,
      body: patch,
      patchType: options.type,
    });
    const current = this.#owner.read(this.resource, namespace, name);
    if (options.type !== "merge" && options.type !== "strategic-merge") {
      throw newBadRequest(`RecordingClient supports merge and strategic-merge patches, not ${options.type}`);
    }
    const next = mergePatch(
      structuredClone(current),
      patch,
      options.type === "strategic-merge",
    ) as KubeObject;
    if (next.metadata?.uid !== current.metadata?.uid) {
      throw newInvalid(groupKindOf(this.resource), name, [
        {
          type: "FieldValueInvalid",
          field: "metadata.uid",
          message: "metadata.uid: Invalid value: field is immutable",
        },
      ]);
    }
    return this.#owner.write(this.resource, next) as T;
  }

  async delete(name: string): Promise<DeleteResult<T>> {
    const namespace = this.namespace ?? "";
    this.#owner.call({ verb: "delete", resource: this.resource.plural, namespace, name });
    const current = this.#owner.read(this.resource, namespace, name);
    this.#owner.remove(this.resource, namespace, name);
    return { kind: "object", object: structuredClone(current) as T };
  }

  async deleteCollection(): Promise<ObjectList<T>> {
    throw newMethodNotSupported(groupResourceOf(this.resource), "deletecollection");
  }

  async getScale(): Promise<Scale> {
    throw newMethodNotSupported(groupResourceOf(this.resource), "get scale");
  }

  async updateScale(): Promise<Scale> {
    throw newMethodNotSupported(groupResourceOf(this.resource), "update scale");
  }
}

function storeKey(resource: ResourceDescriptor, namespace: string, name: string): string {
  return `${resource.group}/${resource.plural}/${namespace}/${name}`;
}

// JSON merge patch (RFC 7386); with `strategic`, ownerReferences merge by uid
// (honouring `$patch: delete`) and `$deleteFromPrimitiveList/finalizers` removes
// finalizers, which is all the strategic-merge the controllers here send.
function mergePatch(target: unknown, patch: unknown, strategic: boolean): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    if (strategic && key === "ownerReferences" && Array.isArray(value)) {
      out[key] = mergeOwnerReferences((out[key] as Record<string, unknown>[] | undefined) ?? [], value);
      if ((out[key] as unknown[]).length === 0) delete out[key];
    } else if (strategic && key.startsWith("$deleteFromPrimitiveList/") && Array.isArray(value)) {
      const field = key.slice("$deleteFromPrimitiveList/".length);
      const kept = ((out[field] as unknown[] | undefined) ?? []).filter((v) => !value.includes(v));
      if (kept.length === 0) delete out[field];
      else out[field] = kept;
    } else if (value === null) {
      delete out[key];
    } else {
      out[key] = mergePatch(out[key], value, strategic);
    }
  }
  return out;
}

function mergeOwnerReferences(
  current: Record<string, unknown>[],
  patch: Record<string, unknown>[],
): Record<string, unknown>[] {
  let result = current.map((ref) => ({ ...ref }));
  for (const entry of patch) {
    const index = result.findIndex((ref) => ref.uid === entry.uid);
    if (entry.$patch === "delete") {
      result = result.filter((ref) => ref.uid !== entry.uid);
    } else if (index === -1) {
      result.push({ ...entry });
    } else {
      result[index] = { ...result[index], ...entry };
    }
  }
  return result;
}
