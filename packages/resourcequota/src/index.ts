export {
  defaultResyncPeriodMs,
  ResourceQuotaController,
  type ResourceQuotaControllerOptions,
} from "./resource-quota-controller.js";
