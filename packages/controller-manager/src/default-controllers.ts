import { DeploymentController } from "@reconcile/deployment";
import { ReplicaSetController } from "@reconcile/replicaset";
import { RateLimitingQueue } from "@reconcile/workqueue";
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

/**
 * The controllers this package knows, as kube-controller-manager's
 * `NewControllerDescriptors`: each call returns a fresh table, so callers may
 * register their own controllers on it.
 */
export function newControllerDescriptors(): ControllerDescriptors {
  return new ControllerDescriptors([replicaSetControllerDescriptor, deploymentControllerDescriptor]);
}
