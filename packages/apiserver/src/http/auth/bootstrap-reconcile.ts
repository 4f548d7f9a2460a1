import {
  clusterRoleBindings,
  clusterRoles,
  isAlreadyExists,
  jsonEqual,
  type KubeObject,
  namespaces,
  type ResourceDescriptor,
  rfc3339,
  roleBindings,
  roles,
} from "@reconcile/api";
import type { Client, ResourceClient } from "@reconcile/client";
import { type Clock, type Random, uuidFrom } from "@reconcile/clock";
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from "kubernetes-types/rbac/v1.js";
import { keyOf } from "../../registry/store/keys.js";
import { type Storage, StorageError } from "../../storage/storage.js";
import {
  bootstrapClusterRoleBindings,
  bootstrapClusterRoles,
  bootstrapNamespaceRoleBindings,
  bootstrapNamespaceRoles,
} from "./bootstrap-policy.js";

// Upstream's `rbac/bootstrap-roles` post-start hook: the bootstrap policy's
// roles and bindings (bootstrap-policy.ts) made, and repaired, in a cluster.

/** Where the bootstrap objects may be written straight into storage, once one server has made them. */
export interface BootstrapStore {
  storage: Storage;
  clock: Clock;
  random: Random;
}

/**
 * Each bootstrap object as the registry stored it the first time in this
 * process (defaults, managedFields), without its uid, times and version:
 * later servers store a copy with their own, instead of ~100 creates.
 */
const storedForm = new Map<string, KubeObject>();

/**
 * Upstream's `rbac/bootstrap-roles` post-start hook: creates each bootstrap
 * role and binding that is missing; one that exists with the autoupdate
 * annotation `"true"` gets the rules (or subjects) it lacks added back, one
 * whose annotation is `"false"` is left as the user made it. With `store`,
 * a missing object this process has created before is written straight
 * into storage in the form the registry gave it (same defaults and
 * managedFields, the server's own uid and time).
 */
export async function reconcileBootstrapPolicy(client: Client, store?: BootstrapStore): Promise<void> {
  await reconcileKind(client, store, clusterRoles, bootstrapClusterRoles(), withMissingRules);
  await reconcileKind(
    client,
    store,
    clusterRoleBindings,
    bootstrapClusterRoleBindings(),
    withMissingSubjects,
  );
  // The namespaced roles and bindings go into kube-system and kube-public, made first if missing.
  for (const namespace of ["kube-system", "kube-public"]) {
    try {
      await client.resource(namespaces).create({ metadata: { name: namespace } });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
    const inNamespace = <T extends KubeObject>(objects: T[]) =>
      objects.filter((object) => object.metadata?.namespace === namespace);
    await reconcileKind(
      client,
      store,
      roles,
      inNamespace(bootstrapNamespaceRoles()),
      withMissingRules,
      namespace,
    );
    await reconcileKind(
      client,
      store,
      roleBindings,
      inNamespace(bootstrapNamespaceRoleBindings()),
      withMissingSubjects,
      namespace,
    );
  }
}

/** A role with the rules of the bootstrap one it lacks added back; undefined when it lacks none (or aggregates). */
function withMissingRules<T extends ClusterRole | Role>(existing: T, role: T): T | undefined {
  if ((role as ClusterRole).aggregationRule !== undefined) return undefined;
  const missing = (role.rules ?? []).filter((r) => !(existing.rules ?? []).some((e) => jsonEqual(e, r)));
  return missing.length > 0 ? { ...existing, rules: [...(existing.rules ?? []), ...missing] } : undefined;
}

/** A binding with the subjects of the bootstrap one it lacks added back; undefined when it lacks none. */
function withMissingSubjects<T extends ClusterRoleBinding | RoleBinding>(
  existing: T,
  binding: T,
): T | undefined {
  const missing = (binding.subjects ?? []).filter(
    (s) => !(existing.subjects ?? []).some((e) => e.kind === s.kind && e.name === s.name),
  );
  return missing.length > 0
    ? { ...existing, subjects: [...(existing.subjects ?? []), ...missing] }
    : undefined;
}

async function reconcileKind<T extends ClusterRole | ClusterRoleBinding | Role | RoleBinding>(
  client: Client,
  store: BootstrapStore | undefined,
  resource: ResourceDescriptor<T>,
  wanted: readonly T[],
  repaired: (existing: T, wanted: T) => T | undefined,
  namespace?: string,
): Promise<void> {
  const api = client.resource(resource, namespace);
  const existing = new Map((await api.list()).items.map((item) => [item.metadata?.name ?? "", item]));
  for (const object of wanted) {
    const name = object.metadata?.name ?? "";
    const current = existing.get(name);
    if (current === undefined) {
      await create(api, store, resource, object, namespace);
      continue;
    }
    if (current.metadata?.annotations?.["rbac.authorization.kubernetes.io/autoupdate"] === "false") continue;
    const fixed = repaired(current, object);
    if (fixed !== undefined) await api.update(fixed);
  }
}

async function create<T extends KubeObject>(
  api: ResourceClient<T>,
  store: BootstrapStore | undefined,
  resource: ResourceDescriptor<T>,
  object: T,
  namespace?: string,
): Promise<void> {
  const name = object.metadata?.name ?? "";
  const formKey = `${resource.kind}/${namespace ?? ""}/${name}`;
  const form = storedForm.get(formKey);
  try {
    if (store === undefined || form === undefined) {
      const created = await api.create(object);
      // Only a form no admission step of this server changed is one every server would store.
      if (asWritten(object, created)) {
        const {
          uid: _uid,
          resourceVersion: _rv,
          creationTimestamp: _ct,
          ...metadata
        } = created.metadata ?? {};
        storedForm.set(formKey, { ...created, metadata } as KubeObject);
      }
      return;
    }
    const now = rfc3339(store.clock.now());
    const metadata = form.metadata ?? {};
    await store.storage.create(keyOf(resource, namespace, name), {
      ...form,
      metadata: {
        ...metadata,
        uid: uuidFrom(store.random),
        creationTimestamp: now,
        ...(metadata.managedFields === undefined
          ? {}
          : { managedFields: metadata.managedFields.map((entry) => ({ ...entry, time: now })) }),
      },
    });
  } catch (error) {
    // Another server on the same storage made it first.
    if (!isAlreadyExists(error) && !StorageError.is(error, "KeyExists")) throw error;
  }
}

/** Whether the stored object keeps what was written: its labels, annotations and content. */
function asWritten(written: KubeObject, stored: KubeObject): boolean {
  const content = ({ metadata, apiVersion: _a, kind: _k, ...rest }: KubeObject) => ({
    labels: metadata?.labels ?? {},
    annotations: metadata?.annotations ?? {},
    finalizers: metadata?.finalizers ?? [],
    ...rest,
  });
  return jsonEqual(content(written), content(stored));
}
