// Each kind's Table columns and cells, for `kubectl get`, beside the kinds: the shared parts, then
// the printers by group.

export * from "./admission.js";
export { formatHPAMetrics, horizontalPodAutoscalerPrinter } from "./autoscaling.js";
export * from "./cluster-kinds.js";
export {
  defaultPrinter,
  formatLabelSelector,
  type Printer,
  type TableColumnDefinition,
} from "./columns.js";
export {
  configMapPrinter,
  eventPrinter,
  leasePrinter,
  namespacePrinter,
  nodePrinter,
  podPrinter,
  secretPrinter,
  servicePrinter,
} from "./core.js";
export { endpointSlicePrinter, endpointsPrinter } from "./discovery.js";
export * from "./storage-only.js";
export { deploymentPrinter, jobPrinter, replicaSetPrinter } from "./workloads.js";
