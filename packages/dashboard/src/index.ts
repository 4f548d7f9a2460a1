export {
  type CallEntry,
  type CausalityEntry,
  CausalityRecorder,
  type LiveTraceFile,
  type ReconcileEntry,
} from "./causality.js";
export { gatherMachinery, gatherMetrics, type MachineryProvider, type MachineryView } from "./machinery.js";
export { getFromApiServer, proxyToApiServer } from "./proxy.js";
export { maxRelayPaths, type RelayLine, relayWatches } from "./relay.js";
export { Dashboard, type DashboardOptions } from "./server.js";
