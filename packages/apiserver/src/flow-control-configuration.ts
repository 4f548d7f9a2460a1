import {
  flowSchemas,
  type KubeObject,
  priorityLevelConfigurations,
  type ResourceDescriptor,
  rfc3339,
  StatusError,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import { jsonEqual } from "./json.js";
import {
  autoUpdateAnnotation,
  type FlowSchemaObject,
  mandatoryFlowSchemas,
  mandatoryPriorityLevels,
  type PriorityLevelObject,
  suggestedFlowSchemas,
  suggestedPriorityLevels,
} from "./kinds/flow-control-bootstrap.js";

// What kube-apiserver does with API Priority and Fairness objects besides
// storing them: its `priority-and-fairness-config-producer` post-start hook
// keeps the bootstrap configuration (at start, then every minute), and its
// config consumer writes each FlowSchema's `Dangling` condition.

/** The field manager of the consumer's status writes. */
export const configConsumerManager = "api-priority-and-fairness-config-consumer-v1";

/** The field manager of the producer's writes (the bootstrap objects themselves). */
export const configProducerManager = "api-priority-and-fairness-config-producer-v1";

/** How often the bootstrap configuration is ensured again. */
export const ensurePeriodMs = 60_000;

/** Go's `strconv.ParseBool`: undefined for what it refuses. */
function parseBool(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (["1", "t", "T", "TRUE", "true", "True"].includes(value)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(value)) return false;
  return undefined;
}

/**
 * `shouldUpdateSpec`: the annotation says so, or (without a readable one)
 * the object was never changed since its creation.
 */
function mayUpdate(object: KubeObject): boolean {
  return parseBool(object.metadata?.annotations?.[autoUpdateAnnotation]) ?? object.metadata?.generation === 1;
}

type Bootstrap = FlowSchemaObject | PriorityLevelObject;

/**
 * Keeps the bootstrap FlowSchemas and PriorityLevelConfigurations as
 * kube-apiserver v1.32 does: suggested objects are created when missing and
 * put back to their bootstrap spec while they may be; mandatory ones always
 * (the exempt level's `spec.exempt` excepted); objects marked for automatic
 * update that are no longer part of the bootstrap set are deleted. Each
 * FlowSchema's `Dangling` condition says whether its priority level exists.
 */
export class FlowControlConfiguration {
  readonly #client: Client;
  readonly #clock: Clock;
  #pending: Promise<void> = Promise.resolve();

  constructor(options: { client: Client; clock: Clock }) {
    this.#client = options.client;
    this.#clock = options.clock;
  }

  /** Ensures now and every minute, and writes the conditions after every change, until `signal` aborts. */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    const watches = [flowSchemas, priorityLevelConfigurations].map((resource) =>
      this.#follow(resource as ResourceDescriptor, signal),
    );
    while (!signal.aborted) {
      this.#enqueue(signal, async () => {
        await this.#ensure();
        await this.#writeConditions();
      });
      await this.#clock.sleep(ensurePeriodMs, { signal }).catch(() => {});
    }
    await Promise.all(watches);
    await this.#pending;
  }

  /** Resolves once the conditions follow every write made so far. */
  settled(): Promise<void> {
    this.#enqueue(undefined, () => this.#writeConditions());
    return this.#pending;
  }

  /** One piece of work at a time; a failed one (storage gone at shutdown) waits for the next turn. */
  #enqueue(signal: AbortSignal | undefined, work: () => Promise<void>): void {
    this.#pending = this.#pending.then(async () => {
      if (signal?.aborted) return;
      await work().catch(() => {});
    });
  }

  /** Writes the conditions after each change of `resource`, watching again if a watch ends. */
  async #follow(resource: ResourceDescriptor, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        for await (const event of await this.#client.resource(resource).watch({ signal })) {
          if (event.type !== "BOOKMARK") this.#enqueue(signal, () => this.#writeConditions());
        }
      } catch {
        // The watch failed (the server is closing, or its history moved on): start again.
      }
      if (!signal.aborted) await this.#clock.sleep(1000, { signal }).catch(() => {});
    }
  }

  async #ensure(): Promise<void> {
    await this.#ensureAll(flowSchemas, suggestedFlowSchemas, false);
    await this.#ensureAll(priorityLevelConfigurations, suggestedPriorityLevels, false);
    await this.#ensureAll(flowSchemas, mandatoryFlowSchemas, true);
    await this.#ensureAll(priorityLevelConfigurations, mandatoryPriorityLevels, true);
    await this.#removeUnwanted(flowSchemas, [...mandatoryFlowSchemas, ...suggestedFlowSchemas]);
    await this.#removeUnwanted(priorityLevelConfigurations, [
      ...mandatoryPriorityLevels,
      ...suggestedPriorityLevels,
    ]);
  }

  async #ensureAll(
    resource: ResourceDescriptor,
    wanted: readonly Bootstrap[],
    mandatory: boolean,
  ): Promise<void> {
    const client = this.#client.resource(resource);
    for (const object of wanted) {
      const name = object.metadata!.name!;
      const existing = await client.get(name).catch(ignoreNotFound);
      if (existing === undefined) {
        await client
          .create(object as KubeObject, { fieldManager: configProducerManager })
          .catch(ignoreConflict);
        continue;
      }
      if (!mandatory && !mayUpdate(existing)) continue;
      let spec = object.spec as unknown as Record<string, unknown>;
      // The exempt level's shares and lendable percent are the operator's to set.
      const kept = (existing as { spec?: { exempt?: unknown } }).spec?.exempt;
      if (mandatory && name === "exempt" && kept !== undefined) spec = { ...spec, exempt: kept };
      const annotations = existing.metadata?.annotations ?? {};
      if (
        jsonEqual((existing as { spec?: unknown }).spec, spec) &&
        annotations[autoUpdateAnnotation] === "true"
      )
        continue;
      await client
        .update(
          {
            ...existing,
            metadata: {
              ...existing.metadata,
              annotations: { ...annotations, [autoUpdateAnnotation]: "true" },
            },
            spec,
          } as KubeObject,
          { fieldManager: configProducerManager },
        )
        .catch(ignoreNotFound);
    }
  }

  async #removeUnwanted(resource: ResourceDescriptor, bootstrap: readonly Bootstrap[]): Promise<void> {
    const client = this.#client.resource(resource);
    const names = new Set(bootstrap.map((object) => object.metadata?.name));
    for (const object of (await client.list({})).items) {
      const name = object.metadata?.name ?? "";
      if (names.has(name) || parseBool(object.metadata?.annotations?.[autoUpdateAnnotation]) !== true)
        continue;
      await client.delete(name).catch(ignoreNotFound);
    }
  }

  /** The config consumer's `presyncFlowSchemaStatus`, applied as its field manager. */
  async #writeConditions(): Promise<void> {
    const levels = new Set(
      (await this.#client.resource(priorityLevelConfigurations).list({})).items.map(
        (pl) => pl.metadata?.name,
      ),
    );
    const client = this.#client.resource(flowSchemas);
    for (const fs of (await client.list({})).items) {
      const level = fs.spec?.priorityLevelConfiguration?.name ?? "";
      const found = levels.has(level);
      const condition = {
        type: "Dangling",
        status: found ? "False" : "True",
        reason: found ? "Found" : "NotFound",
        message: found
          ? `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists`
          : `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object`,
      };
      const current = fs.status?.conditions?.find((c) => c.type === "Dangling");
      if (
        current?.status === condition.status &&
        current.reason === condition.reason &&
        current.message === condition.message
      )
        continue;
      const name = fs.metadata?.name ?? "";
      const applied = {
        apiVersion: "flowcontrol.apiserver.k8s.io/v1",
        kind: "FlowSchema",
        metadata: { name },
        status: { conditions: [{ ...condition, lastTransitionTime: rfc3339(this.#clock.now()) }] },
      };
      await client
        .patch(name, applied, {
          type: "apply",
          subresource: "status",
          fieldManager: configConsumerManager,
          force: true,
        })
        .catch(ignoreNotFound);
    }
  }
}

function ignoreNotFound(error: unknown): undefined {
  if (error instanceof StatusError && error.status.code === 404) return undefined;
  throw error;
}

function ignoreConflict(error: unknown): undefined {
  if (error instanceof StatusError && error.status.code === 409) return undefined;
  throw error;
}

/** The configuration kept in the background: how to stop it, and when it has. */
export interface RunningFlowControl {
  readonly stop: AbortController;
  readonly done: Promise<void>;
  readonly configuration: FlowControlConfiguration;
}

/** Starts keeping the configuration once the server is `ready` (its initial objects stored). */
export function startFlowControlConfiguration(
  options: ConstructorParameters<typeof FlowControlConfiguration>[0],
  ready: Promise<void>,
): RunningFlowControl {
  const stop = new AbortController();
  const configuration = new FlowControlConfiguration(options);
  const done = ready.then(
    () => configuration.run({ signal: stop.signal }),
    () => {},
  );
  return { stop, done, configuration };
}
