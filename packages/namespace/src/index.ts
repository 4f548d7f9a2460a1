export {
  type DiscoveredResource,
  type DiscoveredResources,
  discoveryFromClient,
  type ResourceDiscovery,
} from "@reconcile/client";
export {
  finalizerEstimateSeconds,
  kubernetesFinalizer,
  NamespaceController,
  type NamespaceControllerOptions,
  namespaceConditionTypes,
  namespaceDeletionGracePeriodMs,
} from "./namespace-controller.js";
