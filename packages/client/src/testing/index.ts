export { type ConformanceTarget, describeClientConformance } from "./conformance.js";
export { type FaultKind, FaultProxy, type FaultProxyOptions, type FaultRates } from "./fault-proxy.js";
