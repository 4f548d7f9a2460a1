import type { KubeObject } from "@reconcile/api";
import type { AdmissionAttributes, AdmissionOperation } from "../admission.js";
import type { DryRunOption, StoreCore } from "./context.js";

/**
 * The attributes of one write for the store's admission chain, or undefined
 * when the server runs without one (nothing to ask).
 */
export function admissionOf(
  store: StoreCore,
  operation: AdmissionOperation,
  write: {
    subresource?: string | undefined;
    namespace?: string | undefined;
    name?: string | undefined;
    object?: KubeObject | undefined;
    oldObject?: KubeObject | undefined;
  },
  options: DryRunOption,
): WriteAttributes | undefined {
  if (store.context.admission === undefined) return undefined;
  const { object, oldObject } = write;
  const meta = object?.metadata ?? oldObject?.metadata;
  const resource = store.resource;
  return new WriteAttributes(
    operation,
    resource,
    write.subresource ?? "",
    resource.namespaced ? (write.namespace ?? meta?.namespace ?? "") : "",
    write.name ?? meta?.name ?? "",
    object,
    oldObject,
    options,
  );
}

/**
 * One write's attributes; warnings and annotations go to its options. A
 * class, so a write makes one object rather than one and two closures; a
 * spread of it would leave its methods behind, so {@link WriteAttributes.with}
 * makes the same write with other objects.
 */
export class WriteAttributes implements AdmissionAttributes {
  readonly dryRun: boolean;
  readonly user: DryRunOption["user"];
  readonly #options: DryRunOption;

  constructor(
    readonly operation: AdmissionOperation,
    readonly resource: StoreCore["resource"],
    readonly subresource: string,
    readonly namespace: string,
    readonly name: string,
    readonly object: KubeObject | undefined,
    readonly oldObject: KubeObject | undefined,
    options: DryRunOption,
  ) {
    this.dryRun = options.dryRun === "All";
    this.user = options.user;
    this.#options = options;
  }

  /** The same write with `object` or `oldObject` (where given) in place of its own. */
  with(objects: { object?: KubeObject | undefined; oldObject?: KubeObject | undefined }): WriteAttributes {
    return new WriteAttributes(
      this.operation,
      this.resource,
      this.subresource,
      this.namespace,
      this.name,
      "object" in objects ? objects.object : this.object,
      "oldObject" in objects ? objects.oldObject : this.oldObject,
      this.#options,
    );
  }

  warn(message: string): void {
    this.#options.warnings?.push(message);
  }

  annotate(key: string, value: string, level?: "Metadata" | "Request" | "RequestResponse"): void {
    this.#options.annotate?.(key, value, level);
  }
}

/**
 * The mutating phase of the store's admission chain for `attributes` (none:
 * nothing); done within the call when no plugin had to wait.
 */
export function mutate(store: StoreCore, attributes: AdmissionAttributes | undefined): void | Promise<void> {
  if (attributes === undefined || store.context.admission === undefined) return;
  const redefault = store.context.admission.mutate(attributes);
  if (redefault instanceof Promise) return redefault.then((again) => redefaulted(store, attributes, again));
  redefaulted(store, attributes, redefault);
}

/** A webhook's patch is decoded and defaulted as a body is (upstream's mutation dispatcher). */
function redefaulted(store: StoreCore, attributes: AdmissionAttributes, redefault: boolean): void {
  // Only the kind's own object takes its defaults, not a Binding or an Eviction posted to a subresource.
  const ownObject = attributes.subresource === "" || attributes.subresource === "status";
  if (redefault && ownObject && attributes.object !== undefined)
    store.definition.strategy.applyDefaults?.(attributes.object);
}

/**
 * The validating phase of the store's admission chain for `attributes` (none:
 * nothing); done within the call when no plugin had to wait.
 */
export function validateAdmission(
  store: StoreCore,
  attributes: AdmissionAttributes | undefined,
): void | Promise<void> {
  if (attributes !== undefined) return store.context.admission?.validate(attributes);
}
