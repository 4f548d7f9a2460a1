import type { Event, Lease, Namespace } from "@reconcile/api";
import { configMaps, events, leases, namespaces, nodes, secrets, selectableFieldsOf } from "@reconcile/api";
import type { Taint } from "kubernetes-types/core/v1.js";
import { dnsLabelName } from "../registry/meta-validation.js";
import type { Strategy } from "../registry/strategy.js";
import { configMapStrategy, secretStrategy } from "./config-data.js";
import { defineKind, resourceVerbs } from "./definition.js";
import { checkNodeTaints } from "./pod-scheduling-checks.js";
import {
  configMapPrinter,
  eventPrinter,
  leasePrinter,
  namespacePrinter,
  nodePrinter,
  secretPrinter,
} from "./printers/index.js";
import { finalizeSubresource } from "./subresources.js";

const eventTypes = ["Normal", "Warning"];

const leaseStrategy: Strategy = {
  validate(object, errors) {
    const spec = (object as Lease).spec;
    if (spec === undefined) return;
    if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds <= 0)
      errors.invalid("spec.leaseDurationSeconds", spec.leaseDurationSeconds, "must be greater than 0");
    if (spec.leaseTransitions !== undefined && spec.leaseTransitions < 0)
      errors.invalid("spec.leaseTransitions", spec.leaseTransitions, "must be greater than or equal to 0");
  },
};

const eventStrategy: Strategy = {
  validate(object, errors) {
    const event = object as Event;
    const involved = event.involvedObject ?? {};
    // The legacy events API requires the involved object to live in the event's namespace.
    if (involved.namespace && involved.namespace !== event.metadata?.namespace)
      errors.invalid("involvedObject.namespace", involved.namespace, "does not match event.namespace");
    if (event.type !== undefined && event.type !== "" && !eventTypes.includes(event.type))
      errors.notSupported("type", event.type, eventTypes);
    if (event.count !== undefined && event.count < 0)
      errors.invalid("count", event.count, "must be greater than or equal to 0");
  },
};

/** The finalizer the namespace controller removes once a namespace is empty (`api.FinalizerKubernetes`). */
const kubernetesFinalizer = "kubernetes";
const standardFinalizers = [kubernetesFinalizer, "orphan", "foregroundDeletion"];

const namespaceStrategy: Strategy = {
  nameRule: dnsLabelName,
  prepareForCreate(object) {
    const namespace = object as Namespace;
    namespace.status = { phase: "Active" };
    // Required on create, kept out of the defaults because it is removed over the namespace's life.
    const spec = (namespace.spec ??= {});
    if (!spec.finalizers?.includes(kubernetesFinalizer))
      spec.finalizers = [...(spec.finalizers ?? []), kubernetesFinalizer];
  },
  prepareForUpdate(object, old) {
    // Only the finalize subresource changes spec.finalizers.
    const finalizers = (old as Namespace).spec?.finalizers;
    const namespace = object as Namespace;
    if (finalizers === undefined) {
      if (namespace.spec !== undefined) delete namespace.spec.finalizers;
    } else (namespace.spec ??= {}).finalizers = [...finalizers];
  },
  prepareForFinalize(object, old) {
    // `/finalize` changes spec.finalizers and nothing else.
    const finalizers = (object as Namespace).spec?.finalizers;
    for (const key of Object.keys(object)) delete (object as Record<string, unknown>)[key];
    Object.assign(object, structuredClone(old));
    const namespace = object as Namespace;
    if (finalizers === undefined || finalizers.length === 0) {
      if (namespace.spec !== undefined) delete namespace.spec.finalizers;
    } else (namespace.spec ??= {}).finalizers = [...finalizers];
  },
  validate(object, errors) {
    for (const [index, finalizer] of ((object as Namespace).spec?.finalizers ?? []).entries()) {
      // ValidateFinalizerName: standard names, or names qualified by a domain.
      if (!standardFinalizers.includes(finalizer) && !finalizer.includes("/"))
        errors.invalid(
          `spec.finalizers[${index}]`,
          finalizer,
          "name is neither a standard finalizer name nor is it fully qualified",
        );
    }
  },
  holdsDeletion(object) {
    return ((object as Namespace).spec?.finalizers ?? []).length > 0;
  },
  prepareForDelete(object) {
    // NamespaceREST.Delete: the first delete switches the phase; the controller empties the namespace.
    (object as Namespace).status = { ...(object as Namespace).status, phase: "Terminating" };
  },
  applyDefaults(object) {
    // Every namespace carries its own name as a label, so selectors can pick namespaces by name.
    const meta = (object.metadata ??= {});
    if (meta.name) meta.labels = { ...meta.labels, "kubernetes.io/metadata.name": meta.name };
  },
};

const nodeStrategy: Strategy = {
  validate(object, errors) {
    const spec = (object as { spec?: { podCIDR?: string; taints?: Taint[] } }).spec;
    checkNodeTaints(errors, spec?.taints ?? []);
    if (spec?.podCIDR !== undefined && spec.podCIDR !== "" && !/^[0-9a-fA-F:.]+\/[0-9]+$/.test(spec.podCIDR))
      errors.invalid(
        "spec.podCIDR",
        spec.podCIDR,
        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
      );
  },
};

export const eventDefinition = defineKind({
  descriptor: events,
  strategy: eventStrategy,
  selectableFields: selectableFieldsOf(events),
  printer: eventPrinter,
  allowsCreateOnUpdate: true,
});

export const nodeDefinition = defineKind({
  descriptor: nodes,
  strategy: nodeStrategy,
  selectableFields: selectableFieldsOf(nodes),
  printer: nodePrinter,
});

export const namespaceDefinition = defineKind({
  descriptor: namespaces,
  strategy: namespaceStrategy,
  selectableFields: selectableFieldsOf(namespaces),
  printer: namespacePrinter,
  // kube-apiserver's namespace storage has no DeleteCollection.
  verbs: resourceVerbs.filter((verb) => verb !== "deletecollection"),
  protobufMessage: "Namespace",
  subresources: { finalize: finalizeSubresource },
});

export const configMapDefinition = defineKind({
  descriptor: configMaps,
  strategy: configMapStrategy,
  printer: configMapPrinter,
  protobufMessage: "ConfigMap",
});

export const secretDefinition = defineKind({
  descriptor: secrets,
  strategy: secretStrategy,
  selectableFields: selectableFieldsOf(secrets),
  printer: secretPrinter,
  protobufMessage: "Secret",
});

export const leaseDefinition = defineKind({
  descriptor: leases,
  strategy: leaseStrategy,
  printer: leasePrinter,
  allowsCreateOnUpdate: true,
  allowsUnconditionalUpdate: false,
});
