export {
  type ExploreOptions,
  type ExploreReport,
  expectNoViolation,
  explore,
  formatReproducer,
  type Reproducer,
  reproduce,
} from "./explore.js";
export {
  type DecisionPoint,
  defaultFaultRates,
  describeFault,
  type Fault,
  type FaultFilter,
  type FaultKind,
  type FaultRates,
  type FaultSpec,
  faultKinds,
} from "./faults.js";
export {
  clientFaultKinds,
  type FaultyClient,
  type FaultyClientOptions,
  faultyClient,
} from "./faulty-client.js";
export { managerComponent, readyKubelet } from "./manager-component.js";
export { simulate } from "./simulate.js";
export { describeEntry, story, Trace, type TraceEntry } from "./trace.js";
export {
  readTraceFile,
  runSimCommand,
  type TraceFile,
  traceFileOf,
  writeTraceFile,
} from "./trace-file.js";
export {
  type Invariant,
  type SimCluster,
  type SimComponent,
  type SimContext,
  type SimRunnable,
  type SimulationOptions,
  type SimulationResult,
  simulationEpoch,
  type Violation,
} from "./types.js";
export { type AdvanceUntilOptions, advanceUntil } from "./virtual-time.js";
