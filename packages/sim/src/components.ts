import { ControllerManager } from "@reconcile/controller-manager";
import { Kubelet, SimulatedRuntime } from "@reconcile/kubelet";
import { Scheduler } from "@reconcile/scheduler";
import type { SimComponent } from "./types.js";

/** The built-in controllers in one controller manager, as `system:kube-controller-manager` with each controller as its own ServiceAccount. */
export function builtinComponent(
  controllers: readonly string[],
  name: string,
  elected: boolean,
): SimComponent {
  return {
    name,
    leaderElection: elected ? { namespace: "kube-system", name: "kube-controller-manager" } : undefined,
    user: { username: "system:kube-controller-manager" },
    construct: (context) => {
      const manager = new ControllerManager({
        client: context.client,
        // Each controller as its own ServiceAccount, as kube-controller-manager with --use-service-account-credentials.
        serviceAccountCredentials: (serviceAccount) =>
          context.clientAs({
            username: `system:serviceaccount:kube-system:${serviceAccount}`,
            groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system"],
          }),
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

/** kube-scheduler as `system:kube-scheduler`, one scheduling cycle per turn of the event loop (so runs repeat exactly). */
export function schedulerComponent(): SimComponent {
  return {
    name: "kube-scheduler",
    user: { username: "system:kube-scheduler" },
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

/** When, after its start, a container struck by `containerUnready` starts failing its readiness probe. */
const unreadyAfterMs = 2_000;

/**
 * A kubelet as `system:node:<name>` on the simulated runtime (seeded by its node's name), on a pod
 * CIDR of its own; the runtime asks the simulation whether each container it
 * creates crashes (`containerCrash`: exit code 1 after the fault's amount)
 * or goes unready for a while (`containerUnready`: readiness fails from 2 s
 * after its start for the fault's amount).
 */
export function kubeletComponent(nodeName: string, index: number): SimComponent {
  return {
    name: nodeName,
    user: { username: `system:node:${nodeName}`, groups: ["system:nodes"] },
    construct: (context) => {
      const podCIDR = `10.244.${index}.0/24`;
      const runtime = new SimulatedRuntime({
        clock: context.clock,
        seed: nodeName,
        podCIDR,
        behaviour: (container) => {
          const fault = context.faultAt(
            "container",
            `container ${container.pod}/${container.name}#${container.attempt}`,
          );
          if (fault?.kind === "containerCrash")
            return { exitAfterMs: fault.amount ?? 1_000, exitCode: 1, exitReason: "Error" };
          if (fault?.kind === "containerUnready")
            return { unreadyAfterMs, unreadyForMs: fault.amount ?? 5_000 };
          return undefined;
        },
      });
      const kubelet = new Kubelet({
        nodeName,
        podCIDR,
        runtime,
        client: context.client,
        clock: context.clock,
        random: context.random,
        logger: context.logger,
      });
      return {
        run: async (options) => {
          try {
            await kubelet.run(options);
          } finally {
            runtime.close();
          }
        },
      };
    },
  };
}
