import type { DeepReadonly } from "@reconcile/api";
import type { Clock } from "@reconcile/clock";
import type { Container, Pod } from "kubernetes-types/core/v1.js";
import type { KillReason } from "./pod-actions.js";

// How long each container of a pod gets to stop and in which order sidecars stop, as upstream's
// kuberuntime_termination_order.go and the grace period of kuberuntime_container.go's killContainer.

type ReadonlyPod = DeepReadonly<Pod>;
type ReadonlyContainer = DeepReadonly<Container>;

/** `minimumGracePeriodInSeconds`: every container gets at least this long to stop. */
export const minimumGracePeriodSeconds = 2;

/**
 * `setTerminationGracePeriod`: the pod's deletion grace period, else the
 * failed probe's own `terminationGracePeriodSeconds`, else the spec's, else 2.
 */
export function terminationGracePeriod(
  pod: ReadonlyPod,
  container: ReadonlyContainer | undefined,
  reason: KillReason,
): number {
  const deletion = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion !== undefined) return deletion;
  const spec = pod.spec?.terminationGracePeriodSeconds;
  if (spec === undefined) return minimumGracePeriodSeconds;
  const probe =
    reason === "startupProbe"
      ? container?.startupProbe
      : reason === "livenessProbe"
        ? container?.livenessProbe
        : undefined;
  return probe?.terminationGracePeriodSeconds ?? spec;
}

/**
 * `terminationOrdering`: sidecars stop only after every main container and
 * every later sidecar has stopped (so in reverse order), each waiting at
 * most its grace period.
 */
export class TerminationOrdering {
  readonly #terminated = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  readonly #prereqs = new Map<string, Promise<void>[]>();
  readonly #clock: Clock;

  constructor(pod: ReadonlyPod, running: readonly string[], clock: Clock) {
    this.#clock = clock;
    const channel = (name: string) => {
      let resolve = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.#terminated.set(name, { promise, resolve });
      if (!running.includes(name)) resolve();
      return promise;
    };
    const mains = (pod.spec?.containers ?? []).map((c) => channel(c.name));
    let later: Promise<void> | undefined;
    for (const init of [...(pod.spec?.initContainers ?? [])].reverse()) {
      const done = channel(init.name);
      if (init.restartPolicy !== "Always") continue;
      this.#prereqs.set(init.name, later === undefined ? mains : [...mains, later]);
      later = done;
    }
  }

  /** Waits for the container's turn, at most `graceSeconds`; returns the whole seconds waited. */
  async waitForTurn(name: string, graceSeconds: number): Promise<number> {
    const prereqs = this.#prereqs.get(name);
    if (prereqs === undefined || graceSeconds <= 0) return 0;
    const started = this.#clock.now();
    const stop = new AbortController();
    const timeout = this.#clock.sleep(graceSeconds * 1000, { signal: stop.signal }).catch(() => {});
    try {
      await Promise.race([Promise.all(prereqs), timeout]);
    } finally {
      stop.abort();
    }
    return Math.floor((this.#clock.now() - started) / 1000);
  }

  containerTerminated(name: string): void {
    this.#terminated.get(name)?.resolve();
  }
}
