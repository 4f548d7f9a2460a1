export {
  endpointHostname,
  endpointSliceControllerName,
  findPort,
  headlessServiceLabel,
  managedByLabel,
  serviceNameLabel,
} from "./endpoint-util.js";
export {
  desiredSubsets,
  EndpointsController,
  type EndpointsControllerOptions,
  maxEndpointsCapacity,
  overCapacityAnnotation,
  truncateToCapacity,
} from "./endpoints-controller.js";
export {
  EndpointSliceController,
  type EndpointSliceControllerOptions,
  planSlices,
  StaleEndpointSlicesError,
  slicesByServiceIndex,
  zoneLabel,
} from "./endpointslice-controller.js";
export { endpointSlices, endpointsResource, endpointsResources } from "./resources.js";
