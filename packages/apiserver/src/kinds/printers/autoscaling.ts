import { Quantity } from "@reconcile/api";
import { ageColumn, ageOf, column, type Loose, nameColumn, nameOf, num, type Printer } from "./columns.js";

// `kubectl get hpa` as kube-apiserver 1.32 prints it (pkg/printers/internalversion).

/** A quantity as Go's `Quantity.String()` writes it: canonical (`500m`, `1Gi`). */
function quantity(value: unknown): string {
  if (typeof value !== "string" && typeof value !== "number") return "<unknown>";
  try {
    return Quantity.parse(value).toString();
  } catch {
    return String(value);
  }
}

/** One metric's `current/target` (upstream `formatHPAMetrics`, one case per source type). */
function formatMetric(spec: Loose, status: Loose): string {
  const valueOrAverage = (source: Loose, current: Loose) =>
    source?.target?.averageValue !== undefined
      ? `${current?.current?.averageValue !== undefined ? quantity(current.current.averageValue) : "<unknown>"}/${quantity(source.target.averageValue)} (avg)`
      : `${current?.current?.value !== undefined ? quantity(current.current.value) : "<unknown>"}/${quantity(source?.target?.value)}`;
  const resource = (source: Loose, current: Loose) => {
    const name = source?.name ?? "";
    if (source?.target?.averageValue !== undefined) {
      const now =
        current?.current?.averageValue !== undefined ? quantity(current.current.averageValue) : "<unknown>";
      return `${name}: ${now}/${quantity(source.target.averageValue)}`;
    }
    const now =
      typeof current?.current?.averageUtilization === "number"
        ? `${current.current.averageUtilization}%`
        : "<unknown>";
    const target =
      typeof source?.target?.averageUtilization === "number"
        ? `${source.target.averageUtilization}%`
        : "<auto>";
    return `${name}: ${now}/${target}`;
  };
  switch (spec?.type) {
    case "External":
      return valueOrAverage(spec.external, status?.external);
    case "Pods":
      return `${status?.pods?.current?.averageValue !== undefined ? quantity(status.pods.current.averageValue) : "<unknown>"}/${quantity(spec.pods?.target?.averageValue)}`;
    case "Object":
      return valueOrAverage(spec.object, status?.object);
    case "Resource":
      return resource(spec.resource, status?.resource);
    case "ContainerResource":
      return resource(spec.containerResource, status?.containerResource);
    default:
      return "<unknown type>";
  }
}

/** The Targets column: the first two metrics, then `+ N more...`. */
export function formatHPAMetrics(specs: Loose, statuses: Loose): string {
  const list: Loose[] = Array.isArray(specs) ? specs : [];
  if (list.length === 0) return "<none>";
  const current: Loose[] = Array.isArray(statuses) ? statuses : [];
  const shown = list.slice(0, 2).map((spec, i) => formatMetric(spec, current[i]));
  const text = shown.join(", ");
  return list.length > 2 ? `${text} + ${list.length - 2} more...` : text;
}

export const horizontalPodAutoscalerPrinter: Printer = {
  columns: [
    nameColumn,
    column("Reference", "string", "The target resource to scale: kind and name."),
    column("Targets", "string", "The metrics the desired replica count is computed from, current/target."),
    column("MinPods", "string", "The lower limit for the number of replicas."),
    column("MaxPods", "integer", "The upper limit for the number of replicas."),
    column("Replicas", "integer", "The current number of replicas of pods managed by this autoscaler."),
    ageColumn,
  ],
  cells(hpa: Loose, now) {
    const ref = hpa.spec?.scaleTargetRef;
    return [
      nameOf(hpa),
      `${ref?.kind ?? ""}/${ref?.name ?? ""}`,
      formatHPAMetrics(hpa.spec?.metrics, hpa.status?.currentMetrics),
      typeof hpa.spec?.minReplicas === "number" ? String(hpa.spec.minReplicas) : "<unset>",
      num(hpa.spec?.maxReplicas),
      num(hpa.status?.currentReplicas),
      ageOf(hpa, now),
    ];
  },
};
