// Small pieces every view uses: ages, a pod's status as kubectl shows it,
// ownership, and a sparkline.
import { html } from "/vendor/preact.js";

export function age(timestamp, now = Date.now()) {
  if (!timestamp) return "-";
  const seconds = Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours}h` : `${Math.floor(hours / 24)}d`;
}

/** The STATUS column of `kubectl get pods`: Terminating, a container's waiting or terminated reason, or the phase. */
export function podStatus(pod) {
  if (pod.metadata?.deletionTimestamp) return "Terminating";
  for (const status of pod.status?.containerStatuses ?? []) {
    const reason = status.state?.waiting?.reason ?? status.state?.terminated?.reason;
    if (reason && reason !== "Completed") return reason;
  }
  return pod.status?.reason ?? pod.status?.phase ?? "Pending";
}

/** A CSS class for a pod's status. */
export function statusClass(status) {
  switch (status) {
    case "Running":
      return "ok";
    case "Succeeded":
    case "Completed":
      return "done";
    case "Pending":
    case "ContainerCreating":
    case "PodInitializing":
      return "pending";
    case "Terminating":
      return "terminating";
    default:
      return "bad";
  }
}

export function isReady(pod) {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
}

export function nodeReady(node) {
  return node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
}

export function controllerOf(object) {
  return object.metadata?.ownerReferences?.find((ref) => ref.controller);
}

/** The store kind of an owner reference's kind. */
export function storeKind(kind) {
  return `${kind.toLowerCase()}s`;
}

export function byName(a, b) {
  const x = a.metadata?.name ?? "";
  const y = b.metadata?.name ?? "";
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A small line chart of the last values. */
export function Sparkline({ values, label, unit = "" }) {
  const width = 160;
  const height = 36;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const points = values.map(
    (v, i) => `${(i * step).toFixed(1)},${(height - (v / max) * (height - 2) - 1).toFixed(1)}`,
  );
  const last = values.at(-1) ?? 0;
  return html`<figure class="chart">
    <figcaption>${label} <strong>${formatNumber(last)}${unit}</strong></figcaption>
    <svg width=${width} height=${height} viewBox="0 0 ${width} ${height}" role="img" aria-label="${label}: ${formatNumber(last)}${unit}">
      <polyline points=${points.join(" ")} />
    </svg>
  </figure>`;
}

export function formatNumber(n) {
  if (!Number.isFinite(n)) return "-";
  return n >= 100 || Number.isInteger(n) ? String(Math.round(n)) : n.toFixed(1);
}

export function duration(ms) {
  if (ms === undefined) return "-";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
}
