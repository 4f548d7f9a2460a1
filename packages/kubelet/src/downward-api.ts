import type { DeepReadonly, Pod } from "@reconcile/api";
import { milliCpu, wholeUnits } from "./quantity.js";

// The downward API's values, shared by downward API volumes and container
// environment variables: pod fields (`ExtractFieldPathAsString`) and
// container resources (`ExtractResourceValueByContainerName`).

/** A pod field by its path, or undefined for a path the downward API does not serve. */
export function podFieldValue(pod: DeepReadonly<Pod>, fieldPath: string): string | undefined {
  const subscript = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (subscript !== null) {
    const map = pod.metadata?.[subscript[1] as "labels" | "annotations"] ?? {};
    return map[subscript[2] as string] ?? "";
  }
  switch (fieldPath) {
    case "metadata.name":
      return pod.metadata?.name ?? "";
    case "metadata.namespace":
      return pod.metadata?.namespace ?? "";
    case "metadata.uid":
      return pod.metadata?.uid ?? "";
    case "metadata.labels":
      return formatMap(pod.metadata?.labels ?? {});
    case "metadata.annotations":
      return formatMap(pod.metadata?.annotations ?? {});
    case "spec.nodeName":
      return pod.spec?.nodeName ?? "";
    case "spec.serviceAccountName":
      return pod.spec?.serviceAccountName ?? "";
    default:
      return undefined;
  }
}

/**
 * A container's request or limit (`limits.cpu`, `requests.memory`, …) over
 * its divisor, rounded up; a limit not set reads the node's allocatable.
 * `ownContainer` is the one an empty `containerName` means (an env var's own).
 */
export function resourceFieldValue(
  pod: DeepReadonly<Pod>,
  ref: DeepReadonly<{ containerName?: string; resource: string; divisor?: string | number }>,
  allocatable: { milliCpu: number; memory: number },
  ownContainer?: string,
): string {
  const name = ref.containerName || ownContainer;
  const container = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
    (c) => c.name === name,
  );
  const [kind, resource = ""] = ref.resource.split(".", 2) as [string, string | undefined];
  const values = (kind === "limits" ? container?.resources?.limits : container?.resources?.requests) as
    | Readonly<Record<string, string | number>>
    | undefined;
  const set = values?.[resource];
  if (resource === "cpu") {
    const milli = set !== undefined ? milliCpu(set) : kind === "limits" ? allocatable.milliCpu : 0;
    const divisor = milliCpu(ref.divisor ?? "1") || 1000;
    return String(Math.ceil(milli / divisor));
  }
  const value =
    set !== undefined ? wholeUnits(set) : kind === "limits" && resource === "memory" ? allocatable.memory : 0;
  const divisor = wholeUnits(ref.divisor ?? "1") || 1;
  return String(Math.ceil(value / divisor));
}

/** `FormatMap`: `key="value"` lines, sorted by key. */
function formatMap(map: Readonly<Record<string, string>>): string {
  return Object.keys(map)
    .sort()
    .map((key) => `${key}=${JSON.stringify(map[key])}`)
    .join("\n");
}
