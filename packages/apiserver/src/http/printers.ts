// A kind's Table columns and cells, for `kubectl get`: the shared parts, then the printers by group.

export {
  configMapPrinter,
  eventPrinter,
  leasePrinter,
  namespacePrinter,
  nodePrinter,
  podPrinter,
  secretPrinter,
  servicePrinter,
} from "./core-printers.js";
export {
  defaultPrinter,
  formatLabelSelector,
  type Printer,
  type TableColumnDefinition,
} from "./printer-columns.js";
export { deploymentPrinter, jobPrinter, replicaSetPrinter } from "./workload-printers.js";
