import { endpointSlices, endpoints } from "@reconcile/api";

/** `v1 Endpoints` (short name `ep`): the descriptor `@reconcile/api` exports as `endpoints`. */
export const endpointsResource = endpoints;

export { endpointSlices };

/** Both resources, for an API server's served resources (`new ApiServer({ resources: [...builtinResources, ...endpointsResources] })`). */
export const endpointsResources = [endpoints, endpointSlices] as const;
