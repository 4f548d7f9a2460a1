export {
  DisruptionController,
  type DisruptionControllerOptions,
  deletionTimeoutMs,
} from "./disruption-controller.js";
