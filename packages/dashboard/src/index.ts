export { gatherMachinery, type MachineryProvider, type MachineryView } from "./machinery.js";
export { getFromApiServer, proxyToApiServer } from "./proxy.js";
export { maxRelayPaths, type RelayLine, relayWatches } from "./relay.js";
export { Dashboard, type DashboardOptions, loopbackHostAllowed } from "./server.js";
