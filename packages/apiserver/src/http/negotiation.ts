/** One media range of an Accept or Content-Type header: `application/json;as=Table;v=v1;g=meta.k8s.io`. */
export interface MediaType {
  type: string;
  params: Record<string, string>;
}

/** Parses a comma-separated Accept header (or a single Content-Type). Never throws. */
export function parseMediaTypes(header: string | undefined): MediaType[] {
  if (!header) return [];
  const result: MediaType[] = [];
  for (const range of header.split(",")) {
    const [type = "", ...rest] = range.split(";");
    const params: Record<string, string> = {};
    for (const param of rest) {
      const eq = param.indexOf("=");
      if (eq === -1) continue;
      params[param.slice(0, eq).trim().toLowerCase()] = param
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, "");
    }
    const trimmed = type.trim().toLowerCase();
    if (trimmed !== "") result.push({ type: trimmed, params });
  }
  return result;
}

/** The bare media type of a Content-Type header (`application/json`), lower case. */
export function mediaTypeOf(contentType: string | undefined): string {
  return parseMediaTypes(contentType)[0]?.type ?? "";
}

/**
 * The `meta.k8s.io` Table version the client asked for (`v1` preferred over
 * `v1beta1`), or undefined when it wants plain objects. kubectl asks with
 * `application/json;as=Table;v=v1;g=meta.k8s.io,...,application/json`.
 */
export function requestedTableVersion(accept: string | undefined): "v1" | "v1beta1" | undefined {
  let found: "v1" | "v1beta1" | undefined;
  for (const media of parseMediaTypes(accept)) {
    if (media.params.as !== "Table" || media.params.g !== "meta.k8s.io") continue;
    if (media.type !== "application/json" && media.type !== "*/*" && media.type !== "application/*") continue;
    if (media.params.v === "v1") return "v1";
    if (media.params.v === "v1beta1") found = "v1beta1";
  }
  return found;
}

/** The metadata-only forms a client may ask for (client-go's metadata client, controller-runtime's `OnlyMetadata`). */
export interface MetadataForm {
  kind: "PartialObjectMetadata" | "PartialObjectMetadataList";
  version: "v1" | "v1beta1";
}

/**
 * The `meta.k8s.io` PartialObjectMetadata form the client asked for, or
 * undefined when it wants whole objects (the first JSON media range that
 * names one wins; a client lists `application/json` last to take whatever
 * the server can give).
 */
export function requestedMetadataForm(accept: string | undefined): MetadataForm | undefined {
  for (const media of parseMediaTypes(accept)) {
    const { as, g, v } = media.params;
    if (as !== "PartialObjectMetadata" && as !== "PartialObjectMetadataList") continue;
    if (g !== "meta.k8s.io" || (v !== "v1" && v !== "v1beta1")) continue;
    if (media.type !== "application/json" && media.type !== "*/*" && media.type !== "application/*") continue;
    return { kind: as, version: v };
  }
  return undefined;
}

/** Whether the client accepts aggregated discovery v2 (`as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2`). */
export function acceptsAggregatedDiscovery(accept: string | undefined): boolean {
  return parseMediaTypes(accept).some(
    (media) =>
      media.type === "application/json" &&
      media.params.as === "APIGroupDiscoveryList" &&
      media.params.g === "apidiscovery.k8s.io" &&
      media.params.v === "v2",
  );
}
