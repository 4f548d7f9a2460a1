import type { DeepReadonly, KubeObject } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { SharedInformerFactory } from "@reconcile/informer";

/** A component's live informer factories, as the cache check sees them. */
export interface CachedComponent {
  readonly spec: { readonly name: string };
  readonly current: { readonly factories: readonly SharedInformerFactory[] } | undefined;
}

/**
 * Every informer of every live component holds what the server holds:
 * the same objects at the same resourceVersions. The first that does not,
 * as a violation; undefined when all agree.
 */
export async function checkCaches(
  components: readonly CachedComponent[],
  direct: Client,
): Promise<{ invariant: string; message: string } | undefined> {
  for (const state of components) {
    for (const factory of state.current?.factories ?? []) {
      for (const [key, informer] of factory.informers({ running: true })) {
        const resource = informer.resource;
        if (resource === undefined) continue;
        if (!informer.hasSynced()) {
          return { invariant: `cache:${state.spec.name}`, message: `the ${key} informer never synced` };
        }
        const server = (await direct.resource(resource).list()).items;
        const want = new Set(server.map(versionOf));
        const have = new Set(informer.getStore().list().map(versionOf));
        const missing = [...want].filter((v) => !have.has(v));
        const extra = [...have].filter((v) => !want.has(v));
        if (missing.length > 0 || extra.length > 0) {
          return {
            invariant: `cache:${state.spec.name}`,
            message: `the ${key} informer's cache differs from the server: missing ${missing.slice(0, 5).join(", ") || "none"}; stale or extra ${extra.slice(0, 5).join(", ") || "none"}`,
          };
        }
      }
    }
  }
  return undefined;
}

function versionOf(o: DeepReadonly<KubeObject>): string {
  const meta = o.metadata;
  return `${meta?.namespace ? `${meta.namespace}/` : ""}${meta?.name}@${meta?.resourceVersion}`;
}
