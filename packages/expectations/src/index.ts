export {
  type ControlleeExpectations,
  ControllerExpectations,
  type ControllerExpectationsInterface,
  type ControllerExpectationsOptions,
  expectationsTimeoutMs,
  type OutstandingExpectations,
  outstandingOf,
} from "./controller-expectations.js";
export {
  UIDTrackingControllerExpectations,
  type UIDTrackingControllerExpectationsOptions,
} from "./uid-tracking-expectations.js";
