export { LeaderElectionError, type LeaderElectionErrorCode } from "./errors.js";
export { HealthzAdaptor, type HealthzAdaptorOptions } from "./healthz-adaptor.js";
export {
  jitterFactor,
  type LeaderCallbacks,
  type LeaderElectionConfig,
  LeaderElector,
  runLeaderElection,
} from "./leader-elector.js";
export { LeaseLock, type LeaseLockOptions } from "./lease-lock.js";
export type { LeaderElectionLogger } from "./logger.js";
export { type LeaderMetric, type LeaderMetricsProvider, noopLeaderMetricsProvider } from "./metrics.js";
export {
  formatMicroTime,
  type LeaderElectionRecord,
  leaderElectionRecordToLeaseSpec,
  leaseSpecToLeaderElectionRecord,
  rawRecord,
} from "./record.js";
export type { EventRecorder, LockRecord, ResourceLock } from "./resource-lock.js";
