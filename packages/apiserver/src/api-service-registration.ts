import { type APIService, apiServices, jsonEqual, rfc3339, StatusError } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import { reviewGroupVersions } from "./http/auth/review-kinds.js";
import type { ResourceDefinitions } from "./registry/definitions.js";

// kube-apiserver's APIService autoregistration (kube-aggregator's
// autoregister and crdregistration controllers, with the available
// controller's verdict for Local services): one APIService per served
// group-version, named `<version>.<group>`, with upstream's priorities,
// created at start and kept in step as CRDs add and remove versions.

/** The label autoregistration marks its APIServices with: `onstart` for built-in APIs, `true` for CRDs'. */
export const automanagedLabel = "kube-aggregator.kubernetes.io/automanaged";

/**
 * kube-apiserver v1.32's group and version priorities
 * (`DefaultGenericAPIServicePriorities` merged with the kube-apiserver
 * table), by `group/version`: [groupPriorityMinimum, versionPriority].
 */
export const apiServicePriorities: Readonly<Record<string, readonly [number, number]>> = {
  "/v1": [18000, 1],
  "events.k8s.io/v1": [17750, 15],
  "authentication.k8s.io/v1": [17700, 15],
  "authorization.k8s.io/v1": [17600, 15],
  "apps/v1": [17800, 15],
  "autoscaling/v1": [17500, 15],
  "autoscaling/v2": [17500, 30],
  "batch/v1": [17400, 15],
  "certificates.k8s.io/v1": [17300, 15],
  "networking.k8s.io/v1": [17200, 15],
  "policy/v1": [17100, 15],
  "rbac.authorization.k8s.io/v1": [17000, 15],
  "storage.k8s.io/v1": [16800, 15],
  "apiextensions.k8s.io/v1": [16700, 15],
  "admissionregistration.k8s.io/v1": [16700, 15],
  "scheduling.k8s.io/v1": [16600, 15],
  "coordination.k8s.io/v1": [16500, 15],
  "node.k8s.io/v1": [16300, 15],
  "discovery.k8s.io/v1": [16200, 15],
  "flowcontrol.apiserver.k8s.io/v1": [16100, 21],
};

/** CRD group-versions' priorities (crdregistration: "CRDs should have relatively low priority"). */
const customPriority = [1000, 100] as const;
/** metrics.k8s.io, served in process here, gets the priorities metrics-server registers it with. */
const metricsPriority = [100, 100] as const;

/** The [groupPriorityMinimum, versionPriority] autoregistration gives a served group-version. */
export function apiServicePriority(group: string, version: string): readonly [number, number] {
  return (
    apiServicePriorities[`${group}/${version}`] ??
    (group === "metrics.k8s.io" ? metricsPriority : customPriority)
  );
}

/** The APIServices the served kinds call for, by name. */
export function desiredAPIServices(definitions: ResourceDefinitions): Map<string, APIService> {
  const desired = new Map<string, APIService>();
  // The reviews are served without a stored kind, answered over HTTP.
  const served = [...definitions.list().map((definition) => definition.descriptor), ...reviewGroupVersions];
  for (const { group, version } of served) {
    // The aggregator's own group is served by it, not registered with it.
    if (group === "apiregistration.k8s.io") continue;
    const name = `${version}.${group}`;
    if (desired.has(name)) continue;
    const [groupPriorityMinimum, versionPriority] = apiServicePriority(group, version);
    const onStart = apiServicePriorities[`${group}/${version}`] !== undefined || group === "metrics.k8s.io";
    desired.set(name, {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name, labels: { [automanagedLabel]: onStart ? "onstart" : "true" } },
      spec: { ...(group === "" ? {} : { group }), version, groupPriorityMinimum, versionPriority },
    });
  }
  return desired;
}

/**
 * Keeps the APIServices of the served group-versions: creates the missing,
 * corrects a changed spec, deletes those it made whose group-version is no
 * longer served (a CRD removed), and marks each Available as the available
 * controller marks a Local service. Built-in group-versions (`onstart`) are
 * created and corrected by the first sync only; CRDs' (`true`) by every one.
 * APIServices without its label are left alone.
 */
export class APIServiceRegistration {
  readonly #client: Client;
  readonly #definitions: ResourceDefinitions;
  readonly #clock: Clock;
  #pending: Promise<void> = Promise.resolve();
  #again = false;
  /** Whether a sync has completed since start (`onstart` APIServices are synced by the first only). */
  #startSynced = false;

  constructor(options: { client: Client; definitions: ResourceDefinitions; clock: Clock }) {
    this.#client = options.client;
    this.#definitions = options.definitions;
    this.#clock = options.clock;
  }

  /** Syncs now and after every change of the served kinds, until `signal` aborts; settles once stopped. */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    const stop = this.#definitions.onChange(() => this.#schedule(signal));
    this.#schedule(signal);
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    stop();
    await this.#pending;
  }

  /** Resolves once every sync asked for so far has run. */
  settled(): Promise<void> {
    return this.#pending;
  }

  /** One sync at a time; changes during a sync ask for one more after it. */
  #schedule(signal: AbortSignal): void {
    if (this.#again) return;
    this.#again = true;
    this.#pending = this.#pending.then(async () => {
      this.#again = false;
      if (signal.aborted) return;
      await this.#sync().catch(() => {
        // A failed sync (storage gone at shutdown) is tried again on the next change.
      });
    });
  }

  async #sync(): Promise<void> {
    const client = this.#client.resource(apiServices);
    const desired = desiredAPIServices(this.#definitions);
    const existing = await client.list({ labelSelector: automanagedLabel });
    const byName = new Map(existing.items.map((item) => [item.metadata?.name ?? "", item]));
    const first = !this.#startSynced;
    for (const [name, wanted] of desired) {
      const current = byName.get(name);
      // Built-in group-versions are synced on start only: a user's change afterwards (an aggregated
      // metrics-server registered in place of the in-process metrics) stands, as autoregister's `onstart`.
      if (!first && wanted.metadata?.labels?.[automanagedLabel] === "onstart") {
        if (current !== undefined && current.spec?.service === undefined) await this.#markAvailable(current);
        continue;
      }
      let stored: APIService | undefined = current;
      if (current === undefined) stored = await createIfMissing(client, wanted);
      else if (!jsonEqual(current.spec, wanted.spec))
        stored = await client.update({ ...current, spec: wanted.spec! });
      if (stored !== undefined && stored.spec?.service === undefined) await this.#markAvailable(stored);
    }
    for (const [name] of byName) if (!desired.has(name)) await client.delete(name).catch(ignoreNotFound);
    this.#startSynced = true;
  }

  /** The available controller's verdict on a Local APIService. */
  async #markAvailable(service: APIService): Promise<void> {
    const available = service.status?.conditions?.find((c) => c.type === "Available");
    if (available?.status === "True") return;
    await this.#client
      .resource(apiServices)
      .updateStatus({
        ...service,
        status: {
          conditions: [
            {
              type: "Available",
              status: "True",
              lastTransitionTime: rfc3339(this.#clock.now()),
              reason: "Local",
              message: "Local APIServices are always available",
            },
          ],
        },
      })
      .catch(ignoreNotFound);
  }
}

async function createIfMissing(
  client: ReturnType<Client["resource"]>,
  wanted: APIService,
): Promise<APIService | undefined> {
  try {
    return (await client.create(wanted)) as APIService;
  } catch (error) {
    // One of the same name made by someone else is theirs.
    if (error instanceof StatusError && error.status.code === 409) return undefined;
    throw error;
  }
}

function ignoreNotFound(error: unknown): undefined {
  if (error instanceof StatusError && error.status.code === 404) return undefined;
  throw error;
}

/** A registration running in the background: how to stop it, and when it has. */
export interface RunningRegistration {
  readonly stop: AbortController;
  readonly done: Promise<void>;
  readonly registration: APIServiceRegistration;
}

/** Starts a registration once the server is `ready` (its initial objects stored). */
export function startAPIServiceRegistration(
  options: ConstructorParameters<typeof APIServiceRegistration>[0],
  ready: Promise<void>,
): RunningRegistration {
  const stop = new AbortController();
  const registration = new APIServiceRegistration(options);
  const done = ready.then(
    () => registration.run({ signal: stop.signal }),
    () => {},
  );
  return { stop, done, registration };
}
