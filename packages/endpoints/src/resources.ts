import { defineResource } from "@reconcile/api";
import type { Endpoints } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

/** `v1 Endpoints` (short name `ep`). */
export const endpointsResource = defineResource<Endpoints>({
  group: "",
  version: "v1",
  kind: "Endpoints",
  plural: "endpoints",
  namespaced: true,
  shortNames: ["ep"],
});

/** `discovery.k8s.io/v1 EndpointSlice`. */
export const endpointSlices = defineResource<EndpointSlice>({
  group: "discovery.k8s.io",
  version: "v1",
  kind: "EndpointSlice",
  plural: "endpointslices",
  namespaced: true,
});

/** Both resources, for an API server's served resources (`new ApiServer({ resources: [...builtinResources, ...endpointsResources] })`). */
export const endpointsResources = [endpointsResource, endpointSlices] as const;
