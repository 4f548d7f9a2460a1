import { createHash } from "node:crypto";
import { apiVersionOf, type ResourceDescriptor } from "@reconcile/api";

/** The verbs every served resource supports. */
export const resourceVerbs = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "update",
  "watch",
];
const subresourceVerbs = ["get", "patch", "update"];

/**
 * The single-verb subresources of built-in kinds, with the kind they take, as
 * kube-apiserver lists them: kubectl drain evicts only if `pods/eviction`
 * appears with group `policy`, version `v1` and kind `Eviction`. Verbs
 * default to `create`.
 */
const createSubresources: Readonly<
  Record<
    string,
    readonly { name: string; group: string; version: string; kind: string; verbs?: readonly string[] }[]
  >
> = {
  pods: [
    { name: "binding", group: "", version: "v1", kind: "Binding" },
    { name: "eviction", group: "policy", version: "v1", kind: "Eviction" },
  ],
  namespaces: [{ name: "finalize", group: "", version: "v1", kind: "Namespace", verbs: ["update"] }],
};

function createSubresourcesOf(resource: ResourceDescriptor) {
  return resource.group === "" ? (createSubresources[resource.plural] ?? []) : [];
}

/** A resource's verbs: kube-apiserver serves no deletecollection of namespaces. */
export function verbsOf(resource: Pick<ResourceDescriptor, "group" | "plural">): string[] {
  return servesDeleteCollection(resource)
    ? resourceVerbs
    : resourceVerbs.filter((v) => v !== "deletecollection");
}

export function servesDeleteCollection(resource: Pick<ResourceDescriptor, "group" | "plural">): boolean {
  return !(resource.group === "" && resource.plural === "namespaces");
}

/** `/version`: minor 32, so that kubectl's dispatcher runs its built-in v1.32. */
export function versionInfo(): Record<string, string> {
  return {
    major: "1",
    minor: "32",
    gitVersion: "v1.32.0",
    gitCommit: "reconcile",
    gitTreeState: "clean",
    buildDate: "2025-01-01T00:00:00Z",
    goVersion: "go1.23",
    compiler: "gc",
    platform: `${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`,
  };
}

export interface GroupVersion {
  group: string;
  version: string;
  resources: ResourceDescriptor[];
}

/** The served group-versions in discovery order (core first, then groups in the order they appear). */
export function groupVersions(resources: readonly ResourceDescriptor[]): GroupVersion[] {
  const byKey = new Map<string, GroupVersion>();
  for (const resource of resources) {
    const key = apiVersionOf(resource);
    let entry = byKey.get(key);
    if (entry === undefined) {
      entry = { group: resource.group, version: resource.version, resources: [] };
      byKey.set(key, entry);
    }
    entry.resources.push(resource);
  }
  return [...byKey.values()].sort((a, b) => (a.group === "" ? -1 : b.group === "" ? 1 : 0));
}

/** `GET /api`: the core group's versions. */
export function apiVersions(resources: readonly ResourceDescriptor[], serverAddress: string): object {
  return {
    kind: "APIVersions",
    versions: groupVersions(resources)
      .filter((gv) => gv.group === "")
      .map((gv) => gv.version),
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

/** `GET /apis`: the named groups. */
export function apiGroupList(resources: readonly ResourceDescriptor[]): object {
  const groups = new Map<string, { groupVersion: string; version: string }[]>();
  for (const gv of groupVersions(resources)) {
    if (gv.group === "") continue;
    const versions = groups.get(gv.group) ?? [];
    versions.push({ groupVersion: `${gv.group}/${gv.version}`, version: gv.version });
    groups.set(gv.group, versions);
  }
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: [...groups].map(([name, versions]) => ({ name, versions, preferredVersion: versions[0] })),
  };
}

/** `GET /apis/{group}` for one named group, or undefined if it is not served. */
export function apiGroup(resources: readonly ResourceDescriptor[], group: string): object | undefined {
  const versions = groupVersions(resources)
    .filter((gv) => gv.group === group && group !== "")
    .map((gv) => ({ groupVersion: `${gv.group}/${gv.version}`, version: gv.version }));
  if (versions.length === 0) return undefined;
  return { kind: "APIGroup", apiVersion: "v1", name: group, versions, preferredVersion: versions[0] };
}

/**
 * `GET /api/v1` or `/apis/{group}/{version}`: the resources with their short
 * names, categories (`all` makes `kubectl get all` find them), verbs and the
 * `status` / `scale` subresources. Undefined if the group-version is not served.
 */
export function apiResourceList(
  resources: readonly ResourceDescriptor[],
  group: string,
  version: string,
): object | undefined {
  const served = resources.filter((r) => r.group === group && r.version === version);
  if (served.length === 0) return undefined;
  const list: object[] = [];
  for (const resource of served) {
    list.push({
      name: resource.plural,
      singularName: resource.singular,
      namespaced: resource.namespaced,
      kind: resource.kind,
      verbs: verbsOf(resource),
      ...(resource.shortNames.length > 0 ? { shortNames: [...resource.shortNames] } : {}),
      ...(resource.categories.length > 0 ? { categories: [...resource.categories] } : {}),
      storageVersionHash: createHash("sha256")
        .update(`${apiVersionOf(resource)}/${resource.kind}`)
        .digest("base64")
        .slice(0, 11),
    });
    for (const subresource of resource.subresources) {
      list.push({
        name: `${resource.plural}/${subresource}`,
        singularName: "",
        namespaced: resource.namespaced,
        ...(subresource === "scale"
          ? { group: "autoscaling", version: "v1", kind: "Scale" }
          : { kind: resource.kind }),
        verbs: subresourceVerbs,
      });
    }
    for (const subresource of createSubresourcesOf(resource)) {
      list.push({
        name: `${resource.plural}/${subresource.name}`,
        singularName: "",
        namespaced: resource.namespaced,
        ...(subresource.group === "" ? {} : { group: subresource.group, version: subresource.version }),
        kind: subresource.kind,
        verbs: [...(subresource.verbs ?? ["create"])],
      });
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: apiVersionOf({ group, version }),
    resources: list,
  };
}

/** The media type of aggregated discovery (`apidiscovery.k8s.io/v2`), which kubectl asks for first. */
export const aggregatedDiscoveryContentType =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/**
 * Aggregated discovery (`APIGroupDiscoveryList`, v2): every resource of the core
 * group (`/api`) or of the named groups (`/apis`) in one answer, so a client
 * needs no request per group-version. It must go out with
 * {@link aggregatedDiscoveryContentType}: kubectl decides by the Content-Type.
 */
export function aggregatedDiscovery(resources: readonly ResourceDescriptor[], core: boolean): object {
  const groups = new Map<string, GroupVersion[]>();
  for (const gv of groupVersions(resources)) {
    if ((gv.group === "") !== core) continue;
    const versions = groups.get(gv.group) ?? [];
    versions.push(gv);
    groups.set(gv.group, versions);
  }
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion: "apidiscovery.k8s.io/v2",
    metadata: {},
    items: [...groups].map(([group, versions]) => ({
      metadata: group === "" ? {} : { name: group },
      versions: versions.map((gv) => ({
        version: gv.version,
        freshness: "Current",
        resources: gv.resources.map((resource) => ({
          resource: resource.plural,
          responseKind: { group: resource.group, version: resource.version, kind: resource.kind },
          scope: resource.namespaced ? "Namespaced" : "Cluster",
          singularResource: resource.singular,
          verbs: verbsOf(resource),
          ...(resource.shortNames.length > 0 ? { shortNames: [...resource.shortNames] } : {}),
          ...(resource.categories.length > 0 ? { categories: [...resource.categories] } : {}),
          ...(resource.subresources.length + createSubresourcesOf(resource).length > 0
            ? {
                subresources: [
                  ...resource.subresources.map((subresource) => ({
                    subresource,
                    responseKind:
                      subresource === "scale"
                        ? { group: "autoscaling", version: "v1", kind: "Scale" }
                        : { group: resource.group, version: resource.version, kind: resource.kind },
                    verbs: subresourceVerbs,
                  })),
                  ...createSubresourcesOf(resource).map((subresource) => ({
                    subresource: subresource.name,
                    responseKind: {
                      group: subresource.group,
                      version: subresource.version,
                      kind: subresource.kind,
                    },
                    verbs: [...(subresource.verbs ?? ["create"])],
                  })),
                ],
              }
            : {}),
        })),
      })),
    })),
  };
}
