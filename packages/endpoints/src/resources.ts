import {
  endpointSlices as apiEndpointSlices,
  endpoints,
  type KubeObject,
  type ResourceDescriptor,
} from "@reconcile/api";
import type { Endpoints } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

// The descriptors `@reconcile/api` defines, under the names this package first published (typed
// here in full, so that the published declarations name kubernetes-types' modules as they are).

/** `v1 Endpoints` (short name `ep`). */
export const endpointsResource: ResourceDescriptor<Endpoints & KubeObject> = endpoints;

/** `discovery.k8s.io/v1 EndpointSlice`. */
export const endpointSlices: ResourceDescriptor<EndpointSlice & KubeObject> = apiEndpointSlices;

/** Both resources, for an API server's served resources (`new ApiServer({ resources: [...builtinResources, ...endpointsResources] })`). */
export const endpointsResources = [endpointsResource, endpointSlices] as const;
