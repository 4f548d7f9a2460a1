// The web view of a demo cluster: the dashboard reads the API server
// through a kubeconfig, as kubectl does, and the components' machinery,
// metrics and recorded causality in process.
import { loadKubeConfig } from "@reconcile/client";
import { type CausalityRecorder, Dashboard } from "@reconcile/dashboard";
import type { Cluster } from "./cluster.js";

export async function openDashboard(options: {
  /** A kubeconfig (YAML) for the cluster's API server. */
  kubeconfig: string;
  cluster: Cluster;
  causality: CausalityRecorder | undefined;
  /** Default 0: a free one. */
  port?: number | undefined;
}): Promise<{ url: string; close(): Promise<void> }> {
  const { cluster } = options;
  return new Dashboard({
    kubeConfig: await loadKubeConfig({ yaml: options.kubeconfig }),
    machinery: cluster.machinery(),
    metrics: [() => cluster.controllerManagers[0]!.manager.registry.metrics()],
    causality: options.causality,
  }).listen({ port: options.port ?? 0 });
}

/** Resolves on Ctrl-C or SIGTERM. */
export function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
}
