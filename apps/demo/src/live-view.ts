// The demo's view of the cluster: nodes (with the age of their last
// heartbeat), ReplicaSets, pods with node and phase, the Service's
// endpoints, and who leads the control plane. Redraws in place on a
// terminal; prints one final table per step otherwise.
import type { Deployment, Lease, Namespace, Node, Pod, ReplicaSet } from "@reconcile/api";
import type { Endpoints } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

export interface View {
  deployment: Deployment | undefined;
  replicaSets: ReplicaSet[];
  pods: Pod[];
  nodes: Node[];
  nodeLeases: Lease[];
  endpoints: Endpoints | undefined;
  slices: EndpointSlice[];
  /** Lease name in kube-system → holder. */
  leaders: Record<string, string>;
  namespaces: Namespace[];
  /** `namespace/name` of every ServiceAccount. */
  serviceAccounts: string[];
  now: number;
}

/**
 * A table redrawn in place on a terminal as the cluster changes; elsewhere (a pipe, CI) only each
 * step's final table is written, so the log stays readable.
 */
export class Screen<V> {
  heading = "";
  readonly #render: (heading: string, view: V) => string[];
  #lines: string[] = [];
  #drawnLines = 0;
  readonly #tty = process.stdout.isTTY === true;

  constructor(render: (heading: string, view: V) => string[]) {
    this.#render = render;
  }

  draw(view: V): void {
    this.#lines = this.#render(this.heading, view);
    if (!this.#tty) return;
    if (this.#drawnLines > 0) process.stdout.write(`\x1b[${this.#drawnLines}A\x1b[J`);
    process.stdout.write(`${this.#lines.join("\n")}\n`);
    this.#drawnLines = this.#lines.length;
  }

  /** Leaves the step's final table on screen and starts a new one below it. */
  commit(): void {
    if (!this.#tty) process.stdout.write(`${this.#lines.join("\n")}\n`);
    process.stdout.write("\n");
    this.#drawnLines = 0;
  }
}

/** The story's screen: nodes, leaders, Deployments, ReplicaSets, pods and endpoints under a title. */
export class LiveView extends Screen<View> {
  constructor(title: string) {
    super((heading, view) => render(title, heading, view));
  }
}

function render(title: string, heading: string, view: View): string[] {
  const lines = [`${title} — ${heading}`, ""];
  const leaders = Object.entries(view.leaders)
    .filter(([lease]) => lease === "kube-controller-manager" || lease === "kube-scheduler")
    .map(([lease, holder]) => `${lease}: ${holder || "-"}`)
    .join("   ");
  if (leaders) lines.push(`  leaders  ${leaders}`, "");

  lines.push("  NODE      STATUS                      HEARTBEAT  PODS");
  for (const node of [...view.nodes].sort(byName)) {
    const nodeName = node.metadata?.name ?? "";
    const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
    const status = `${ready ? "Ready" : "NotReady"}${node.spec?.unschedulable ? ",SchedulingDisabled" : ""}`;
    const lease = view.nodeLeases.find((l) => l.metadata?.name === nodeName);
    const renew = lease?.spec?.renewTime ? Date.parse(lease.spec.renewTime) : undefined;
    const age = renew === undefined ? "-" : `${Math.max(0, Math.round((view.now - renew) / 1000))}s ago`;
    const count = view.pods.filter((p) => p.spec?.nodeName === nodeName).length;
    lines.push(`  ${pad(nodeName, 8)}  ${pad(status, 26)}  ${pad(age, 9)}  ${count}`);
  }

  const d = view.deployment;
  lines.push("", "  DEPLOYMENT  READY  UP-TO-DATE  AVAILABLE  IMAGE");
  if (d) {
    lines.push(
      `  ${pad(d.metadata?.name, 10)}  ${pad(`${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`, 5)}  ${pad(d.status?.updatedReplicas ?? 0, 10)}  ${pad(d.status?.availableReplicas ?? 0, 9)}  ${d.spec?.template.spec?.containers[0]?.image ?? "-"}`,
    );
  }
  lines.push("", "  REPLICASET        DESIRED  CURRENT  READY  REVISION  IMAGE");
  for (const rs of [...view.replicaSets].sort(byName)) {
    lines.push(
      `  ${pad(rs.metadata?.name, 16)}  ${pad(rs.spec?.replicas, 7)}  ${pad(rs.status?.replicas ?? 0, 7)}  ${pad(rs.status?.readyReplicas ?? 0, 5)}  ${pad(rs.metadata?.annotations?.["deployment.kubernetes.io/revision"], 8)}  ${rs.spec?.template?.spec?.containers[0]?.image ?? "-"}`,
    );
  }
  lines.push("", "  POD                         NODE      STATUS       READY  IP");
  for (const pod of [...view.pods].sort(byName)) {
    const status = pod.metadata?.deletionTimestamp ? "Terminating" : (pod.status?.phase ?? "Pending");
    const ready = pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
    lines.push(
      `  ${pad(pod.metadata?.name, 26)}  ${pad(pod.spec?.nodeName, 8)}  ${pad(status, 11)}  ${ready ? "1/1  " : "0/1  "}  ${pod.status?.podIP ?? "-"}`,
    );
  }
  if (view.endpoints || view.slices.length > 0) {
    const ready = (view.endpoints?.subsets ?? []).flatMap((s) => s.addresses ?? []).length;
    const notReady = (view.endpoints?.subsets ?? []).flatMap((s) => s.notReadyAddresses ?? []).length;
    const sliceEndpoints = view.slices.reduce((n, s) => n + (s.endpoints?.length ?? 0), 0);
    lines.push(
      "",
      `  endpoints/web: ${ready} ready, ${notReady} not ready   endpointslices: ${view.slices.length} (${sliceEndpoints} endpoints)`,
    );
  }
  return lines;
}

function byName(a: { metadata?: { name?: string } }, b: { metadata?: { name?: string } }): number {
  return (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? "");
}

function pad(value: unknown, width: number): string {
  return String(value ?? "-").padEnd(width);
}
