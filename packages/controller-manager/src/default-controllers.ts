import { DeploymentController } from "@reconcile/deployment";
import { EndpointSliceController, EndpointsController } from "@reconcile/endpoints";
import { ReplicaSetController } from "@reconcile/replicaset";
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  RateLimitingQueue,
} from "@reconcile/workqueue";
import { type ControllerDescriptor, ControllerDescriptors } from "./controller-descriptors.js";

/** `replicaset-controller` (alias `replicaset`): queue `replicaset`, 5 workers, Events from `replicaset-controller` (the controller's own recorder, flushed when it stops). */
export const replicaSetControllerDescriptor: ControllerDescriptor = {
  name: "replicaset-controller",
  aliases: ["replicaset"],
  construct: (context) =>
    ReplicaSetController.fromInformerFactory(context.informerFactory, {
      client: context.client,
      clock: context.clock,
      logger: context.logger,
      queue: new RateLimitingQueue<string>({
        name: "replicaset",
        clock: context.clock,
        metricsProvider: context.queueMetricsProvider,
      }),
    }),
};

/** `deployment-controller` (alias `deployment`): queue `deployment`, 5 workers, Events from `deployment-controller`. */
export const deploymentControllerDescriptor: ControllerDescriptor = {
  name: "deployment-controller",
  aliases: ["deployment"],
  construct: (context) =>
    DeploymentController.fromInformerFactory(context.informerFactory, {
      client: context.client,
      clock: context.clock,
      logger: context.logger,
      queue: new RateLimitingQueue<string>({
        name: "deployment",
        clock: context.clock,
        metricsProvider: context.queueMetricsProvider,
      }),
    }),
};

/** `endpoints-controller` (alias `endpoint`): queue `endpoint`, 5 workers (`--concurrent-endpoint-syncs`). */
export const endpointsControllerDescriptor: ControllerDescriptor = {
  name: "endpoints-controller",
  aliases: ["endpoint"],
  construct: (context) =>
    EndpointsController.fromInformerFactory(context.informerFactory, {
      client: context.client,
      clock: context.clock,
      logger: context.logger,
      queue: new RateLimitingQueue<string>({
        name: "endpoint",
        clock: context.clock,
        metricsProvider: context.queueMetricsProvider,
      }),
    }),
};

/**
 * `endpointslice-controller` (alias `endpointslice`): queue `endpoint_slice`
 * with upstream's 1 s → 1000 s per-item backoff, 5 workers
 * (`--concurrent-service-endpoint-syncs`), 100 endpoints per slice.
 */
export const endpointSliceControllerDescriptor: ControllerDescriptor = {
  name: "endpointslice-controller",
  aliases: ["endpointslice"],
  construct: (context) =>
    EndpointSliceController.fromInformerFactory(context.informerFactory, {
      client: context.client,
      clock: context.clock,
      logger: context.logger,
      queue: new RateLimitingQueue<string>({
        name: "endpoint_slice",
        clock: context.clock,
        metricsProvider: context.queueMetricsProvider,
        rateLimiter: new MaxOfRateLimiter({
          limiters: [
            new ItemExponentialFailureRateLimiter({ baseDelay: 1_000, maxDelay: 1_000_000 }),
            new BucketRateLimiter({ qps: 10, burst: 100, clock: context.clock }),
          ],
        }),
      }),
    }),
};

/**
 * The controllers this package knows, as kube-controller-manager's
 * `NewControllerDescriptors`: each call returns a fresh table, so callers may
 * register their own controllers on it.
 */
export function newControllerDescriptors(): ControllerDescriptors {
  return new ControllerDescriptors([
    endpointsControllerDescriptor,
    endpointSliceControllerDescriptor,
    replicaSetControllerDescriptor,
    deploymentControllerDescriptor,
  ]);
}
