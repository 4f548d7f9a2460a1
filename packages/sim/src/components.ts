import { ControllerManager } from "@reconcile/controller-manager";
import { Kubelet } from "@reconcile/kubelet";
import { Scheduler } from "@reconcile/scheduler";
import type { SimComponent } from "./types.js";

/** The built-in controllers in one controller manager, without leader election. */
export function builtinComponent(
  controllers: readonly string[],
  name: string,
  elected: boolean,
): SimComponent {
  return {
    name,
    leaderElection: elected ? { namespace: "kube-system", name: "kube-controller-manager" } : undefined,
    construct: (context) => {
      const manager = new ControllerManager({
        client: context.client,
        clock: context.clock,
        random: context.random,
        reconcileObserver: context.reconcileObserver,
        logger: context.logger,
        controllers: [...controllers],
        leaderElection: elected ? { identity: name } : false,
      });
      return { run: (o) => manager.run(o), informers: manager.manager.informers };
    },
  };
}

/** kube-scheduler, one scheduling cycle per turn of the event loop (so runs repeat exactly). */
export function schedulerComponent(): SimComponent {
  return {
    name: "kube-scheduler",
    construct: (context) =>
      Scheduler.fromInformerFactory(context.informerFactory, {
        client: context.client,
        clock: context.clock,
        random: context.random,
        logger: context.logger,
        cyclesPerTurn: 1,
      }),
  };
}

/** A kubelet on the simulated runtime (seeded by its node's name). */
export function kubeletComponent(nodeName: string): SimComponent {
  return {
    name: nodeName,
    construct: (context) =>
      new Kubelet({
        nodeName,
        client: context.client,
        clock: context.clock,
        random: context.random,
        logger: context.logger,
      }),
  };
}
