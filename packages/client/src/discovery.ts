import { defineResource, errorMessage, type ResourceDescriptor } from "@reconcile/api";
import type { Client } from "./client.js";

/** One served resource and the verbs it answers, as discovery lists it. */
export interface DiscoveredResource {
  readonly resource: ResourceDescriptor;
  readonly verbs: readonly string[];
}

/**
 * What discovery found: the resources of every group-version that answered,
 * and, by `group/version`, the error of each that did not (client-go's
 * `ErrGroupDiscoveryFailed`). A partial answer is still used.
 */
export interface DiscoveredResources {
  readonly resources: readonly DiscoveredResource[];
  readonly failedGroups: ReadonlyMap<string, string>;
}

/** Lists the served resources (client-go's `ServerPreferredNamespacedResources`). */
export type ResourceDiscovery = (signal?: AbortSignal) => Promise<DiscoveredResources>;

/** A client that knows what its server serves (the embedded server's `InProcessClient`). */
interface ServedResources {
  serverResources(): readonly { resource: ResourceDescriptor; verbs: readonly string[] }[];
}

/** A client that can request any path (`HttpClient`). */
interface RawRequests {
  requestJson<R>(spec: {
    method: string;
    path: string;
    idempotent: boolean;
    signal?: AbortSignal;
  }): Promise<R>;
}

/**
 * Discovery through `client`: the embedded server's own table when the
 * client is in process, else `/api/v1` and the preferred version of every
 * group under `/apis`. With a client that offers neither (a wrapper), each
 * discovery rejects, which the namespace controller records as a discovery
 * failure; pass `discoverResources` then.
 */
export function discoveryFromClient(client: Client): ResourceDiscovery {
  const served = client as Partial<ServedResources>;
  if (typeof served.serverResources === "function") {
    const list = served.serverResources.bind(client);
    return async () => ({ resources: list(), failedGroups: new Map() });
  }
  const raw = client as Partial<RawRequests>;
  if (typeof raw.requestJson === "function") return httpDiscovery(raw as RawRequests);
  return () => Promise.reject(new Error("the client offers no discovery (serverResources or requestJson)"));
}

interface ApiResourceList {
  groupVersion?: string;
  resources?: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[];
}

function httpDiscovery(client: RawRequests): ResourceDiscovery {
  return async (signal) => {
    const get = <R>(path: string) =>
      client.requestJson<R>({ method: "GET", path, idempotent: true, ...(signal ? { signal } : {}) });
    const groupVersions: { group: string; version: string }[] = [{ group: "", version: "v1" }];
    const groups = await get<{ groups?: { name: string; preferredVersion?: { version: string } }[] }>(
      "/apis",
    );
    for (const group of groups.groups ?? []) {
      if (group.preferredVersion)
        groupVersions.push({ group: group.name, version: group.preferredVersion.version });
    }
    const resources: DiscoveredResource[] = [];
    const failedGroups = new Map<string, string>();
    await Promise.all(
      groupVersions.map(async ({ group, version }) => {
        const gv = group ? `${group}/${version}` : version;
        try {
          const list = await get<ApiResourceList>(group ? `/apis/${gv}` : "/api/v1");
          for (const entry of list.resources ?? []) {
            if (entry.name.includes("/")) continue; // subresources
            const resource = defineResource({
              group,
              version,
              kind: entry.kind,
              plural: entry.name,
              namespaced: entry.namespaced,
            });
            resources.push({ resource, verbs: entry.verbs ?? [] });
          }
        } catch (error) {
          failedGroups.set(gv, errorMessage(error));
        }
      }),
    );
    return { resources, failedGroups };
  };
}
