// An aggregated server's discovery, as kube-aggregator's discovery manager
// keeps it: the server's `APIResourceList` for its group-version turned into
// the resources of aggregated discovery (apidiscovery.k8s.io/v2), marked
// `Stale` when the server could not be asked.

/** What an aggregated group-version contributes to aggregated discovery. */
export interface RemoteDiscovery {
  /** `APIResourceDiscovery` entries. */
  readonly resources: readonly object[];
  readonly freshness: "Current" | "Stale";
}

interface LegacyResource {
  name?: unknown;
  singularName?: unknown;
  namespaced?: unknown;
  group?: unknown;
  version?: unknown;
  kind?: unknown;
  verbs?: unknown;
  shortNames?: unknown;
  categories?: unknown;
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

/**
 * The aggregated-discovery resources of an `APIResourceList` body (upstream's
 * `convertAPIResourceList`): `a/b` entries become subresources of `a`; a
 * body that is no resource list is discovery that could not be read.
 */
export function remoteDiscovery(body: string, group: string, version: string): RemoteDiscovery {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { resources: [], freshness: "Stale" };
  }
  const list = (parsed as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(list)) return { resources: [], freshness: "Stale" };
  const kindOf = (r: LegacyResource) => ({
    group: typeof r.group === "string" ? r.group : group,
    version: typeof r.version === "string" ? r.version : version,
    kind: typeof r.kind === "string" ? r.kind : "",
  });
  const byName = new Map<string, Record<string, unknown>>();
  const subresources: [string, object][] = [];
  for (const entry of list as LegacyResource[]) {
    if (typeof entry?.name !== "string" || entry.name === "") continue;
    const slash = entry.name.indexOf("/");
    if (slash >= 0) {
      subresources.push([
        entry.name.slice(0, slash),
        {
          subresource: entry.name.slice(slash + 1),
          responseKind: kindOf(entry),
          verbs: strings(entry.verbs),
        },
      ]);
      continue;
    }
    const shortNames = strings(entry.shortNames);
    const categories = strings(entry.categories);
    byName.set(entry.name, {
      resource: entry.name,
      responseKind: kindOf(entry),
      scope: entry.namespaced === true ? "Namespaced" : "Cluster",
      singularResource: typeof entry.singularName === "string" ? entry.singularName : "",
      verbs: strings(entry.verbs),
      ...(shortNames.length > 0 ? { shortNames } : {}),
      ...(categories.length > 0 ? { categories } : {}),
    });
  }
  for (const [parent, subresource] of subresources) {
    const resource = byName.get(parent);
    if (resource === undefined) continue;
    resource.subresources = [...((resource.subresources as object[] | undefined) ?? []), subresource];
  }
  return { resources: [...byName.values()], freshness: "Current" };
}
