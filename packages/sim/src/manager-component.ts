import { Manager, type ManagerOptions } from "@reconcile/runtime";
import type { SimComponent } from "./simulate.js";

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
