import { type Pod, pods, rfc3339 } from "@reconcile/api";
import { Manager, type ManagerOptions, newControllerManagedBy } from "@reconcile/runtime";
import type { SimComponent } from "./types.js";

/**
 * A component of controllers written on `@reconcile/runtime`: a fresh
 * `Manager` on the simulation's client, clock and random source each start,
 * handed to `setup` to register its controllers (`newControllerManagedBy`),
 * exactly as the operator's `main` would. Its shared informers are checked
 * against the server at the end.
 */
export function managerComponent(
  name: string,
  setup: (manager: Manager) => void,
  options: Omit<ManagerOptions, "client" | "clock" | "random" | "reconcileObserver"> = {},
): SimComponent {
  return {
    name,
    construct: (context) => {
      const manager = new Manager({
        logger: context.logger,
        ...options,
        client: context.client,
        clock: context.clock,
        random: context.random,
        reconcileObserver: context.reconcileObserver,
      });
      setup(manager);
      return { run: (o) => manager.run(o), informers: manager.informers };
    },
  };
}

/**
 * Stands in for the kubelets, as a component of its own (so faults strike it
 * too): every pod not being deleted is reported `Running` and `Ready` through
 * its status, the moment it is seen. For controllers that wait on available
 * pods (Deployments, StatefulSets, an operator's `Ready` condition).
 */
export function readyKubelet(name = "kubelet"): SimComponent {
  return managerComponent(name, (manager) => {
    newControllerManagedBy(manager)
      .for(pods)
      .complete(async (request, { client, get, signal, clock }) => {
        const pod = get(pods, request);
        if (pod === undefined || pod.metadata?.deletionTimestamp || pod.status?.phase === "Running") return;
        const now = rfc3339(clock.now());
        const ready = { status: "True" as const, lastTransitionTime: now };
        await client.resource(pods, request.namespace).updateStatus(
          {
            ...pod,
            status: {
              phase: "Running",
              startTime: now,
              conditions: [
                { type: "Ready", ...ready },
                { type: "ContainersReady", ...ready },
              ],
            },
          } as Pod,
          { signal },
        );
      });
  });
}
