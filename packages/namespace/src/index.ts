export {
  type DiscoveredResource,
  type DiscoveredResources,
  discoveryFromClient,
  type ResourceDiscovery,
} from "./discovery.js";
export {
  finalizerEstimateSeconds,
  kubernetesFinalizer,
  NamespaceController,
  type NamespaceControllerOptions,
  namespaceConditionTypes,
  namespaceDeletionGracePeriodMs,
} from "./namespace-controller.js";
