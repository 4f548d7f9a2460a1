import {
  customResourceDefinitions as crdDescriptor,
  jsonEqual,
  type KubeObject,
  type ResourceDescriptor,
  rfc3339,
  StatusError,
  type WatchEvent,
} from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Clock } from "@reconcile/clock";
import { defineKind, genericStrategy, type ResourceDefinition } from "../kinds/definition.js";
import { type ResourceDefinitions, resourceKeyOf } from "../registry/definitions.js";
import type { ConversionWebhooks } from "./conversion-webhook.js";
import { definitionsForCustomResource } from "./custom-kind.js";
import {
  type CustomResourceDefinition,
  defaultCustomResourceDefinition,
  validateCustomResourceDefinition,
  validateCustomResourceDefinitionStatus,
} from "./definition-validation.js";
import { acceptNames, isServable, setCondition } from "./naming.js";

/**
 * The finalizer a CRD's delete adds: the CRD stays, `Terminating`, until its
 * objects are deleted (apiextensions-apiserver's `CustomResourceCleanupFinalizer`).
 */
export const customResourceCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io";

/** How often a terminating CRD's remaining objects are counted again, as upstream's finalizer polls. */
const instancePollMs = 5000;

/** `apiextensions.k8s.io/v1` CustomResourceDefinitions, typed by the server's own view of the kind. */
export const customResourceDefinitions =
  crdDescriptor as unknown as ResourceDescriptor<CustomResourceDefinition>;

/**
 * The CRD kind itself: v1 defaulting, upstream's validation, status wiped on create and kept from the stored
 * object on a main-resource update (the controllers own it).
 */
export const customResourceDefinitionKind: ResourceDefinition = defineKind({
  descriptor: customResourceDefinitions,
  strategy: {
    ...genericStrategy,
    prepareForCreate(object) {
      delete (object as CustomResourceDefinition).status;
    },
    applyDefaults(object) {
      defaultCustomResourceDefinition(object as CustomResourceDefinition);
    },
    validate(object, errors) {
      errors.list.push(...validateCustomResourceDefinition(object as CustomResourceDefinition));
    },
    // The CRD REST's Delete: the first delete marks the CRD and holds it with the cleanup finalizer.
    deletionFinalizers: [customResourceCleanupFinalizer],
    prepareForDelete(object) {
      const crd = object as CustomResourceDefinition;
      const status = (crd.status ??= { acceptedNames: { plural: "", kind: "" }, storedVersions: [] });
      setCondition(
        (status.conditions ??= []),
        {
          type: "Terminating",
          status: "True",
          reason: "InstanceDeletionPending",
          message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        },
        crd.metadata?.deletionTimestamp ?? "",
      );
    },
    // A `/status` write keeps the request's metadata (so the finalizer controller can remove its
    // finalizer there) and the stored spec.
    prepareForStatusUpdate(object, old) {
      (object as CustomResourceDefinition).spec = structuredClone((old as CustomResourceDefinition).spec);
    },
    // A `/status` write checks the accepted names; the spec is the stored one, checked when written.
    validateStatusUpdate(object, _old, errors) {
      errors.list.push(...validateCustomResourceDefinitionStatus(object as CustomResourceDefinition));
    },
    validateUpdate(object, old, errors) {
      const seen = new Set(errors.list.map((e) => e.message));
      for (const error of validateCustomResourceDefinition(
        object as CustomResourceDefinition,
        old as CustomResourceDefinition,
      )) {
        if (!seen.has(error.message)) errors.list.push(error);
      }
    },
  },
}) as ResourceDefinition;

export interface CustomResourceDefinitionControllerOptions {
  /** A client of the server whose CRDs are served (the in-process client). */
  client: Client;
  /** The server's live definitions, where each established CRD's kind is added. */
  definitions: ResourceDefinitions;
  /** The time written into conditions, and what a failed watch waits on before it is restarted. */
  clock: Clock;
  /** How conversion webhooks are called (`strategy: Webhook`); without it such a kind is served at its storage version only. */
  conversionWebhooks?: ConversionWebhooks | undefined;
}

/**
 * Serves the kinds CRDs define, as apiextensions-apiserver's naming, establishing and finalizing controllers
 * together: it accepts names (reporting conflicts within a group), sets `NamesAccepted` and `Established`,
 * adds the kind's definition once its names are accepted and replaces it when the CRD changes; when a CRD is
 * deleted it deletes the kind's objects and stops serving the kind.
 */
export class CustomResourceDefinitionController {
  readonly #client: Client;
  readonly #definitions: ResourceDefinitions;
  readonly #clock: Clock;
  readonly #conversionWebhooks: ConversionWebhooks | undefined;
  readonly #crds = new Map<string, CustomResourceDefinition>();
  /** The CRDs whose objects are being deleted, by name, and the work doing it. */
  readonly #finalizing = new Map<string, Promise<void>>();
  /** The versions of each CRD's kind this controller serves, by CRD name. */
  readonly #installed = new Map<string, ResourceDescriptor[]>();

  constructor(options: CustomResourceDefinitionControllerOptions) {
    this.#client = options.client;
    this.#conversionWebhooks = options.conversionWebhooks;
    this.#definitions = options.definitions;
    this.#clock = options.clock;
  }

  /** Watches CRDs until `signal` aborts; settles once the watch has ended. */
  async run({ signal }: { signal: AbortSignal }): Promise<void> {
    const crds = this.#client.resource(customResourceDefinitions);
    while (!signal.aborted) {
      try {
        const events = await crds.watch({ resourceVersion: "0", signal });
        for await (const event of events)
          await this.#handle(event as WatchEvent<CustomResourceDefinition>, signal);
      } catch {
        // A failed watch is restarted after a second; its synthetic ADDED events bring the state back.
      }
      if (!signal.aborted) await this.#clock.sleep(1000, { signal }).catch(() => {});
    }
    await Promise.allSettled(this.#finalizing.values());
  }

  async #handle(event: WatchEvent<CustomResourceDefinition>, signal: AbortSignal): Promise<void> {
    if (event.type !== "ADDED" && event.type !== "MODIFIED" && event.type !== "DELETED") return;
    const crd = event.object as CustomResourceDefinition;
    const name = crd.metadata?.name ?? "";
    if (event.type === "DELETED") {
      this.#crds.delete(name);
      await this.#uninstall(crd, signal);
      await this.#requeueGroup(crd.spec.group, name, signal);
      return;
    }
    this.#crds.set(name, crd);
    if (
      crd.metadata?.deletionTimestamp &&
      crd.metadata.finalizers?.includes(customResourceCleanupFinalizer)
    ) {
      if (!this.#finalizing.has(name)) {
        this.#refuseCreates(crd);
        const work = this.#finalize(name, signal).finally(() => this.#finalizing.delete(name));
        this.#finalizing.set(name, work);
      }
      return;
    }
    await this.#reconcile(crd, signal);
  }

  /**
   * The finalizing controller: `Terminating` InstanceDeletionInProgress, one deleteCollection per
   * namespace holding objects, a count every 5 s until none is left (an object's own finalizers hold
   * the CRD as long as they hold the object), `Terminating=False`, then the finalizer removed through
   * `/status`, which completes the delete.
   */
  async #finalize(name: string, signal: AbortSignal): Promise<void> {
    const crds = this.#client.resource(customResourceDefinitions);
    const setTerminating = async (status: "True" | "False", reason: string, message: string) => {
      const crd = this.#crds.get(name);
      if (crd === undefined) return undefined;
      const next = structuredClone(crd);
      const nextStatus = (next.status ??= { acceptedNames: { plural: "", kind: "" }, storedVersions: [] });
      setCondition(
        (nextStatus.conditions ??= []),
        { type: "Terminating", status, reason, message },
        rfc3339(this.#clock.now()),
      );
      const updated = await crds.updateStatus(next, { signal });
      this.#crds.set(name, updated);
      return updated;
    };
    while (!signal.aborted) {
      try {
        const crd = this.#crds.get(name);
        if (crd === undefined) return;
        const established = crd.status?.conditions?.some(
          (c) => c.type === "Established" && c.status === "True",
        );
        if (established) {
          await setTerminating(
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
          );
          await this.#deleteInstances(crd, signal);
          await setTerminating("False", "InstanceDeletionCompleted", "removed all instances");
        } else {
          await setTerminating("False", "NeverEstablished", "resource was never established");
        }
        const done = structuredClone(this.#crds.get(name)!);
        done.metadata!.finalizers = (done.metadata?.finalizers ?? []).filter(
          (f) => f !== customResourceCleanupFinalizer,
        );
        await crds.updateStatus(done, { signal });
        return;
      } catch {
        // A conflict or a failed delete: the newest CRD arrives as an event; try again shortly.
        await this.#clock.sleep(1000, { signal }).catch(() => {});
        const latest = await crds.get(name, { signal }).catch(() => undefined);
        if (latest === undefined) return;
        this.#crds.set(name, latest);
      }
    }
  }

  /**
   * While a CRD terminates its kind takes no new objects: a create is upstream's 405 (updates,
   * patches and deletes are still served, so objects' own finalizers can be removed).
   */
  #refuseCreates(crd: CustomResourceDefinition): void {
    for (const descriptor of this.#installed.get(crd.metadata?.name ?? "") ?? []) {
      const served = this.#definitions.get(descriptor);
      if (!served) continue;
      this.#definitions.add(
        Object.freeze({
          ...served,
          strategy: {
            ...served.strategy,
            prepareForCreate() {
              throw new StatusError({
                code: 405,
                reason: "MethodNotAllowed",
                message: "create not allowed while custom resource definition is terminating",
              });
            },
          },
        }),
      );
    }
  }

  /** Deletes every object of the CRD's kind and resolves once none is left. */
  async #deleteInstances(crd: CustomResourceDefinition, signal: AbortSignal): Promise<void> {
    const served = this.#servedDescriptor(crd);
    if (served === undefined) return;
    await this.#deleteAll(served, signal);
    while ((await this.#client.resource(served).list({ signal, limit: 1 })).items.length > 0)
      await this.#clock.sleep(instancePollMs, { signal });
  }

  /** A version of the CRD's kind this controller still serves: any reaches every stored object. */
  #servedDescriptor(crd: CustomResourceDefinition): ResourceDescriptor | undefined {
    const installed = this.#installed.get(crd.metadata?.name ?? "") ?? [];
    return installed.find((descriptor) => this.#definitions.get(descriptor) !== undefined);
  }

  /** Deletes the kind's objects by collection, namespace by namespace. */
  async #deleteAll(resource: ResourceDescriptor, signal: AbortSignal): Promise<void> {
    const list = await this.#client.resource(resource).list({ signal });
    const namespaces = new Set(list.items.map((o: KubeObject) => o.metadata?.namespace ?? ""));
    for (const namespace of namespaces)
      await this.#client.resource(resource, namespace || undefined).deleteCollection({ signal });
  }

  async #reconcile(crd: CustomResourceDefinition, signal: AbortSignal): Promise<void> {
    const status = acceptNames(crd, [...this.#crds.values()], rfc3339(this.#clock.now()));
    if (!jsonEqual(status, crd.status)) {
      try {
        const updated = await this.#client
          .resource(customResourceDefinitions)
          .updateStatus({ ...crd, status }, { signal });
        this.#crds.set(updated.metadata?.name ?? "", updated);
        // The MODIFIED event of this write installs the kind.
        await this.#requeueGroup(crd.spec.group, crd.metadata?.name ?? "", signal);
      } catch {
        // A conflict means a newer version is on its way as an event.
      }
      return;
    }
    if (crd.metadata?.deletionTimestamp || !isServable(crd)) return;
    this.#install(crd);
  }

  /** Serves every served version of the CRD's kind, and stops serving those it no longer has. */
  #install(crd: CustomResourceDefinition): void {
    const name = crd.metadata?.name ?? "";
    const definitions = definitionsForCustomResource(crd, this.#conversionWebhooks);
    for (const definition of definitions) this.#definitions.add(definition);
    const kept = new Set(definitions.map((d) => resourceKeyOf(d.descriptor)));
    for (const old of this.#installed.get(name) ?? [])
      if (!kept.has(resourceKeyOf(old))) this.#definitions.remove(old);
    this.#installed.set(
      name,
      definitions.map((d) => d.descriptor),
    );
  }

  /** Other CRDs of the group may now have their names free (or taken): look at them again. */
  async #requeueGroup(group: string, except: string, signal: AbortSignal): Promise<void> {
    for (const other of [...this.#crds.values()]) {
      if (other.spec.group !== group || other.metadata?.name === except) continue;
      const accepted = other.status?.conditions?.find((c) => c.type === "NamesAccepted")?.status === "True";
      if (!accepted) await this.#reconcile(other, signal);
    }
  }

  async #uninstall(crd: CustomResourceDefinition, signal: AbortSignal): Promise<void> {
    const name = crd.metadata?.name ?? "";
    const served = this.#servedDescriptor(crd);
    if (served !== undefined) {
      try {
        await this.#deleteAll(served, signal);
      } catch {
        // Objects that could not be deleted stay stored; the kind stops being served either way.
      }
    }
    for (const descriptor of this.#installed.get(name) ?? []) this.#definitions.remove(descriptor);
    this.#installed.delete(name);
  }
}
