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
  const { object, oldObject } = write;
  const meta = object?.metadata ?? oldObject?.metadata;
  return {
    operation,
    resource: store.resource,
    subresource: write.subresource ?? "",
    namespace: store.resource.namespaced ? (write.namespace ?? meta?.namespace ?? "") : "",
    name: write.name ?? meta?.name ?? "",
    object,
    oldObject,
    dryRun: options.dryRun === "All",
    user: options.user,
    warn: (message) => {
      options.warnings?.push(message);
    },
    annotate: (key, value, level) => options.annotate?.(key, value, level),
  };
}

/** The mutating phase of the store's admission chain for `attributes` (none: nothing). */
export async function mutate(store: StoreCore, attributes: AdmissionAttributes | undefined): Promise<void> {
  if (attributes === undefined || store.context.admission === undefined) return;
  const redefault = await store.context.admission.mutate(attributes);
  // A webhook's patch is decoded and defaulted as a body is (upstream's mutation dispatcher); only the
  // kind's own object takes its defaults, not a Binding or an Eviction posted to a subresource.
  const ownObject = attributes.subresource === "" || attributes.subresource === "status";
  if (redefault && ownObject && attributes.object !== undefined)
    store.definition.strategy.applyDefaults?.(attributes.object);
}

/** The validating phase of the store's admission chain for `attributes` (none: nothing). */
export async function validateAdmission(
  store: StoreCore,
  attributes: AdmissionAttributes | undefined,
): Promise<void> {
  if (attributes !== undefined) await store.context.admission?.validate(attributes);
}
