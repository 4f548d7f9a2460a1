import {
  groupResourceOf,
  type KubeObject,
  newForbidden,
  type ResourceDescriptor,
  type StatusError,
} from "@reconcile/api";
import { type Clock, type Random, realRandom } from "@reconcile/clock";
import type { AdmissionAttributes, AdmissionUser } from "../registry/admission.js";
import { keyOf } from "../registry/store/keys.js";
import { ListCache, type WriteCountingStorage } from "./read-cache.js";

export type { AdmissionAttributes, AdmissionOperation, AdmissionUser } from "../registry/admission.js";

/**
 * One admission plugin (upstream's `admission.Interface` with its
 * `MutationInterface` and `ValidationInterface`). `admit` may change the
 * object; `validate` may only refuse. Either throws the `StatusError` the
 * client gets. A plugin names the resources it looks at, so the chain asks
 * it about nothing else.
 */
export interface AdmissionPlugin {
  /** Upstream's name (`LimitRanger`), as `--enable-admission-plugins` spells it. */
  readonly name: string;
  /** `group/plural` keys (`/pods`, `apps/deployments`) of the resources it handles; undefined: all. */
  readonly resources?: readonly string[] | undefined;
  /**
   * The mutating step. Resolving `true` says the object was changed from
   * outside the server's own code (a webhook's patch), so the kind's defaults
   * are applied to it again, as upstream decodes a patched object.
   */
  admit?(attributes: AdmissionAttributes): unknown;
  validate?(attributes: AdmissionAttributes): Promise<void> | void;
}

/** What plugins read the cluster's state through: the storage itself, so a read is never stale. */
export interface AdmissionContext {
  readonly clock: Clock;
  /** Where generated names (the token volume's suffix) draw from. */
  readonly random: Random;
  /**
   * The object of `resource` named `name` in `namespace`; shared and
   * read-only. Given at once when the server's cached list of them is
   * current (most writes), else as a promise; `await` takes either.
   */
  get<T extends KubeObject>(
    resource: ResourceDescriptor<T>,
    namespace: string,
    name: string,
  ): T | undefined | Promise<T | undefined>;
  /**
   * The objects of `resource` in `namespace` (all namespaces for ""); shared
   * and read-only. At once when the cached list is current, else a promise.
   */
  list<T extends KubeObject>(
    resource: ResourceDescriptor<T>,
    namespace: string,
  ): readonly T[] | Promise<readonly T[]>;
  /**
   * Writes `object` over the stored one it was read as (its resourceVersion),
   * as a status write would; rejects with a `Conflict` StorageError when
   * another write came first.
   */
  replace<T extends KubeObject>(resource: ResourceDescriptor<T>, object: T): Promise<T>;
  /** The served resource of a kind (a policy's `paramKind`), if any. */
  resourceForKind(apiVersion: string, kind: string): ResourceDescriptor | undefined;
  /**
   * Whether the server's authorizer lets `user` do `verb` on a resource
   * (`approve` on `certificates.k8s.io` `signers`, for the certificate
   * plugins). Undefined: no authorizer is consulted, and such checks pass.
   */
  authorize?(request: AuthorizationQuestion): boolean | Promise<boolean>;
  /**
   * The other served resources kept in the same storage as `resource` (its
   * other versions; `events.k8s.io` events beside core events): what a
   * webhook or policy with `matchPolicy: Equivalent` also matches. Undefined:
   * none.
   */
  equivalents?(resource: ResourceDescriptor): readonly ResourceDescriptor[];
  /** `object` of `from` as `to` serves it (through the stored version); rejects with the conversion's error. */
  convert?(object: KubeObject, from: ResourceDescriptor, to: ResourceDescriptor): Promise<KubeObject>;
}

/**
 * `next(value, a, b)`, at once when `value` is known, else once it is: a
 * plugin whose reads the cache answers runs start to end within the call, so
 * a write that no plugin has to wait for never waits. `a` and `b` are passed
 * on so that `next` can be a function made once rather than a closure made
 * on every write.
 */
export function whenKnown<T, R>(value: T | Promise<T>, next: (value: T) => R): R | Promise<Awaited<R>>;
export function whenKnown<T, A, R>(
  value: T | Promise<T>,
  next: (value: T, a: A) => R,
  a: A,
): R | Promise<Awaited<R>>;
export function whenKnown<T, A, B, R>(
  value: T | Promise<T>,
  next: (value: T, a: A, b: B) => R,
  a: A,
  b: B,
): R | Promise<Awaited<R>>;
export function whenKnown<T, A, B, R>(
  value: T | Promise<T>,
  next: (value: T, a?: A, b?: B) => R,
  a?: A,
  b?: B,
): R | Promise<Awaited<R>> {
  if (value instanceof Promise) return once(value, next, a, b);
  return next(value, a, b);
}

// Apart from whenKnown, whose arguments would otherwise be kept for the closure on every call.
function once<T, A, B, R>(
  value: Promise<T>,
  next: (value: T, a?: A, b?: B) => R,
  a: A | undefined,
  b: B | undefined,
): Promise<Awaited<R>> {
  return value.then((known) => next(known, a, b)) as Promise<Awaited<R>>;
}

/**
 * Whether `items` is known at once to hold nothing: a plugin with nothing
 * configured (no webhook, no policy binding, no quota) then answers within
 * the call instead of waiting on a list.
 */
export function knownEmpty(items: readonly unknown[] | Promise<readonly unknown[]>): boolean {
  return !(items instanceof Promise) && items.length === 0;
}

/** What {@link storageContext} converts between equivalent resources with. */
export interface AdmissionEquivalence {
  equivalents(resource: ResourceDescriptor): readonly ResourceDescriptor[];
  convert(object: KubeObject, from: ResourceDescriptor, to: ResourceDescriptor): Promise<KubeObject>;
}

/** What a plugin asks the authorizer (upstream's `authorizer.AttributesRecord` of a resource request). */
export interface AuthorizationQuestion {
  readonly user: AdmissionUser;
  readonly verb: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly name: string;
}

/**
 * The context of plugins over `storage`: reads go to the storage itself,
 * lists through a cache that a write through `storage` invalidates.
 */
export function storageContext(
  storage: WriteCountingStorage,
  clock: Clock,
  resourceForKind: (apiVersion: string, kind: string) => ResourceDescriptor | undefined = () => undefined,
  random: Random = realRandom,
  authorize?: AdmissionContext["authorize"],
  equivalence?: AdmissionEquivalence,
  lists: ListCache = new ListCache(storage, clock),
): AdmissionContext {
  return {
    clock,
    random,
    resourceForKind,
    ...(authorize === undefined ? {} : { authorize }),
    ...(equivalence === undefined
      ? {}
      : { equivalents: equivalence.equivalents, convert: equivalence.convert }),
    get: (resource, namespace, name) => lists.get(lists.prefixOf(resource, namespace), name) as never,
    list: (resource, namespace) => lists.list(lists.prefixOf(resource, namespace)) as never,
    replace: async (resource, object) => {
      const meta = object.metadata ?? {};
      const key = keyOf(resource, meta.namespace, meta.name ?? "");
      const prefix = lists.prefixOf(resource, meta.namespace ?? "");
      const writesBefore = lists.writes(prefix);
      const written = await storage.update(key, object, Number(meta.resourceVersion));
      lists.replaced(prefix, written, writesBefore);
      return written as never;
    },
  };
}

/** The key plugins name resources by. */
export function resourceKey(resource: Pick<ResourceDescriptor, "group" | "plural">): string {
  let key = resourceKeys.get(resource);
  if (key === undefined) {
    key = `${resource.group}/${resource.plural}`;
    if (resourceKeys.size >= 10_000) resourceKeys.clear();
    resourceKeys.set(resource, key);
  }
  return key;
}

/**
 * The keys of the descriptors asked about (a write's descriptor is its
 * store's, so the same object every time): made once, found by identity.
 */
const resourceKeys = new Map<object, string>();

/**
 * upstream's `admission.NewForbidden`: a 403 naming the object (its
 * `generateName` while the name is still to be generated, `Unknown` without
 * an object).
 */
export function forbidden(attributes: AdmissionAttributes, reason: string): StatusError {
  const meta = attributes.object?.metadata;
  const name = meta?.name || meta?.generateName || attributes.name || "Unknown";
  return newForbidden(groupResourceOf(attributes.resource), name, reason);
}

/** Go's `utilerrors.NewAggregate(errs).Error()`: one message alone, several in brackets. */
export function aggregate(messages: readonly string[]): string {
  return messages.length === 1 ? messages[0]! : `[${messages.join(", ")}]`;
}
