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
): AdmissionAttributes | undefined {
  if (store.context.admission === undefined) return undefined;
  return new WriteAttributes(store, operation, write, options);
}

/** One write's attributes; warnings and annotations go to its options (a class: no closures per write). */
class WriteAttributes implements AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly resource: StoreCore["resource"];
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  readonly object: KubeObject | undefined;
  readonly oldObject: KubeObject | undefined;
  readonly dryRun: boolean;
  readonly user: DryRunOption["user"];
  readonly #options: DryRunOption;

  constructor(
    store: StoreCore,
    operation: AdmissionOperation,
    write: Parameters<typeof admissionOf>[2],
    options: DryRunOption,
  ) {
    const { object, oldObject } = write;
    const meta = object?.metadata ?? oldObject?.metadata;
    this.operation = operation;
    this.resource = store.resource;
    this.subresource = write.subresource ?? "";
    this.namespace = store.resource.namespaced ? (write.namespace ?? meta?.namespace ?? "") : "";
    this.name = write.name ?? meta?.name ?? "";
    this.object = object;
    this.oldObject = oldObject;
    this.dryRun = options.dryRun === "All";
    this.user = options.user;
    this.#options = options;
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
