import { createHash } from "node:crypto";
import { apiVersionOf, kubernetesVersion, type ResourceDescriptor } from "@reconcile/api";
import { apiServicePriority } from "../api-service-registration.js";
import type { ResourceDefinition } from "../kinds/definition.js";
import { compareKubeAwareVersions } from "../kinds/version-priority.js";
import type { RemoteDiscovery } from "./aggregation/discovery.js";

/** One subresource as discovery lists it: its name, the kind it answers or takes, and its verbs. */
interface DiscoveredSubresource {
  name: string;
  group: string;
  version: string;
  kind: string;
  verbs: string[];
}

/** The verbs a handler serves, in discovery's order (kubectl drain looks for `create` on `pods/eviction`). */
const handlerVerbs = [
  ["create", "create"],
  ["get", "get"],
  ["patch", "patch"],
  ["update", "update"],
] as const;

function subresourcesFor({
  descriptor: resource,
  subresources,
}: ResourceDefinition): DiscoveredSubresource[] {
  return Object.entries(subresources).map(([name, handler]) => ({
    name,
    ...(handler.kind ?? { group: resource.group, version: resource.version, kind: resource.kind }),
    verbs: handlerVerbs.filter(([member]) => typeof handler[member] === "function").map(([, verb]) => verb),
  }));
}

/** `/version`: minor 32, so that kubectl's dispatcher runs its built-in v1.32. */
export function versionInfo(): Record<string, string> {
  return {
    ...kubernetesVersion,
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
  /** Set when an aggregated server serves the group-version (its resources are then its own). */
  aggregated?: AggregatedGroupVersion | undefined;
}

/** A group-version an aggregated server serves: its APIService's priorities and the discovery fetched from it. */
export interface AggregatedGroupVersion {
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
  discovery: RemoteDiscovery | undefined;
}

/** [groupPriorityMinimum, versionPriority] of a group-version: its aggregated APIService's, or autoregistration's. */
function priorityOf(gv: GroupVersion): readonly [number, number] {
  return gv.aggregated === undefined
    ? apiServicePriority(gv.group, gv.version)
    : [gv.aggregated.groupPriorityMinimum, gv.aggregated.versionPriority];
}

/**
 * The served group-versions in discovery order, as kube-aggregator lists them
 * (`SortedByGroupAndVersion`): core first, then the aggregator's own group,
 * then groups by their highest APIService priority (`groupPriorityMinimum`,
 * ties by APIService name), each group's versions by `versionPriority`, then
 * kube-aware version order (the preferred first: GA before beta before
 * alpha, newer before older).
 */
export function groupVersions(
  resources: readonly ResourceDescriptor[],
  aggregated: readonly AggregatedGroupVersion[] = [],
): GroupVersion[] {
  const byGroup = new Map<string, Map<string, GroupVersion>>();
  const remote = new Set(aggregated.map((gv) => `${gv.group}/${gv.version}`));
  for (const gv of aggregated) {
    let versions = byGroup.get(gv.group);
    if (versions === undefined) byGroup.set(gv.group, (versions = new Map()));
    versions.set(gv.version, { group: gv.group, version: gv.version, resources: [], aggregated: gv });
  }
  for (const resource of resources) {
    // An aggregated server's group-version is its alone.
    if (remote.size > 0 && remote.has(`${resource.group}/${resource.version}`)) continue;
    let versions = byGroup.get(resource.group);
    if (versions === undefined) {
      versions = new Map();
      byGroup.set(resource.group, versions);
    }
    let entry = versions.get(resource.version);
    if (entry === undefined) {
      entry = { group: resource.group, version: resource.version, resources: [] };
      versions.set(resource.version, entry);
    }
    entry.resources.push(resource);
  }
  const groups = [...byGroup.values()].map((versions) =>
    [...versions.values()].sort(
      (a, b) => priorityOf(b)[1] - priorityOf(a)[1] || compareKubeAwareVersions(b.version, a.version),
    ),
  );
  const ranks = new Map(groups.map((versions) => [versions, groupRank(versions)]));
  return groups.sort((a, b) => compareGroups(ranks.get(a)!, ranks.get(b)!)).flat();
}

/** Where a group's versions go: by its first APIService in the aggregator's order. */
function groupRank(versions: readonly GroupVersion[]): { rank: number; priority: number; name: string } {
  const group = versions[0]!.group;
  if (group === "") return { rank: 0, priority: 0, name: "" };
  if (group === "apiregistration.k8s.io") return { rank: 1, priority: 0, name: "" };
  let best = { rank: 2, priority: -1, name: "" };
  for (const gv of versions) {
    const priority = priorityOf(gv)[0];
    const name = `${gv.version}.${group}`;
    if (priority > best.priority || (priority === best.priority && name < best.name))
      best = { rank: 2, priority, name };
  }
  return best;
}

function compareGroups(
  a: { rank: number; priority: number; name: string },
  b: { rank: number; priority: number; name: string },
): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
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
export function apiGroupList(
  resources: readonly ResourceDescriptor[],
  aggregated: readonly AggregatedGroupVersion[] = [],
): object {
  const groups = new Map<string, { groupVersion: string; version: string }[]>();
  for (const gv of groupVersions(resources, aggregated)) {
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
export function apiGroup(
  resources: readonly ResourceDescriptor[],
  group: string,
  aggregated: readonly AggregatedGroupVersion[] = [],
): object | undefined {
  const versions = groupVersions(resources, aggregated)
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
  definitions: readonly ResourceDefinition[],
  group: string,
  version: string,
): object | undefined {
  const served = definitions.filter((d) => d.descriptor.group === group && d.descriptor.version === version);
  if (served.length === 0) return undefined;
  const list: object[] = [];
  for (const definition of served) {
    const resource = definition.descriptor;
    list.push({
      name: resource.plural,
      singularName: resource.singular,
      namespaced: resource.namespaced,
      kind: resource.kind,
      verbs: [...definition.verbs],
      ...(resource.shortNames.length > 0 ? { shortNames: [...resource.shortNames] } : {}),
      ...(resource.categories.length > 0 ? { categories: [...resource.categories] } : {}),
      storageVersionHash: createHash("sha256")
        .update(`${apiVersionOf(resource)}/${resource.kind}`)
        .digest("base64")
        .slice(0, 11),
    });
    for (const subresource of subresourcesFor(definition)) {
      list.push({
        name: `${resource.plural}/${subresource.name}`,
        singularName: "",
        namespaced: resource.namespaced,
        // The resource's own kind and core kinds are named alone; others with their group and version.
        ...((subresource.group === resource.group && subresource.version === resource.version) ||
        subresource.group === ""
          ? {}
          : { group: subresource.group, version: subresource.version }),
        kind: subresource.kind,
        verbs: subresource.verbs,
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
export function aggregatedDiscovery(
  definitions: readonly ResourceDefinition[],
  core: boolean,
  aggregated: readonly AggregatedGroupVersion[] = [],
): object {
  const byDescriptor = new Map(definitions.map((definition) => [definition.descriptor, definition]));
  const groups = new Map<string, GroupVersion[]>();
  for (const gv of groupVersions([...byDescriptor.keys()], aggregated)) {
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
      versions: versions.map((gv) => {
        if (gv.aggregated === undefined)
          return {
            version: gv.version,
            resources: gv.resources.map((resource) => resourceEntry(byDescriptor.get(resource)!)),
            freshness: "Current",
          };
        // An aggregated server not (yet) asked is as one that did not answer; no resources are left out.
        const { resources = [], freshness = "Stale" } = gv.aggregated.discovery ?? {};
        return { version: gv.version, ...(resources.length > 0 ? { resources } : {}), freshness };
      }),
    })),
  };
}

/** One resource of aggregated discovery. */
function resourceEntry(definition: ResourceDefinition): object {
  const resource = definition.descriptor;
  return {
    resource: resource.plural,
    responseKind: { group: resource.group, version: resource.version, kind: resource.kind },
    scope: resource.namespaced ? "Namespaced" : "Cluster",
    singularResource: resource.singular,
    verbs: [...definition.verbs],
    ...(resource.shortNames.length > 0 ? { shortNames: [...resource.shortNames] } : {}),
    ...(resource.categories.length > 0 ? { categories: [...resource.categories] } : {}),
    ...subresourcesEntry(subresourcesFor(definition)),
  };
}

/** The `subresources` member of an aggregated discovery resource, when it has any. */
function subresourcesEntry(subresources: DiscoveredSubresource[]): object {
  if (subresources.length === 0) return {};
  return {
    subresources: subresources.map((subresource) => ({
      subresource: subresource.name,
      responseKind: { group: subresource.group, version: subresource.version, kind: subresource.kind },
      verbs: subresource.verbs,
    })),
  };
}
