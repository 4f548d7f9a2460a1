import type { ResourceDescriptor } from "@reconcile/api";
import { admissionRegistrationDefinitions } from "./admission-registration.js";
import { apiServiceDefinition } from "./api-services.js";
import { deploymentDefinition, replicaSetDefinition } from "./apps.js";
import { jobDefinition } from "./batch.js";
import { certificateSigningRequestDefinition } from "./certificates.js";
import { clusterDefinitions } from "./cluster.js";
import {
  configMapDefinition,
  eventDefinition,
  leaseDefinition,
  namespaceDefinition,
  nodeDefinition,
  secretDefinition,
} from "./core.js";
import { defineKind, type ResourceDefinition } from "./definition.js";
import { eventsV1EventDefinition } from "./events-api.js";
import { flowControlDefinitions } from "./flow-control.js";
import { podDefinition } from "./pod.js";
import { bindingDefinition } from "./pod-binding.js";
import { runtimeClassDefinition } from "./runtime-class.js";
import { serviceDefinition } from "./service.js";
import { storageCSIDefinitions } from "./storage-csi.js";
import { workloadDefinitions } from "./workloads.js";

/**
 * The kinds reconcile serves by default, in discovery order: those of `builtinResources`, then
 * the kinds served as storage only (workloads without controllers, configuration, storage,
 * networking, policy and RBAC kinds that manifests and kubectl's prune allow-list use).
 */
export const builtinDefinitions: readonly ResourceDefinition[] = [
  podDefinition,
  bindingDefinition,
  eventDefinition,
  nodeDefinition,
  namespaceDefinition,
  configMapDefinition,
  secretDefinition,
  serviceDefinition,
  // kube-apiserver's /apis lists the aggregator's own group first.
  apiServiceDefinition,
  replicaSetDefinition,
  deploymentDefinition,
  eventsV1EventDefinition,
  jobDefinition,
  leaseDefinition,
  ...workloadDefinitions,
  ...clusterDefinitions,
  ...storageCSIDefinitions,
  ...admissionRegistrationDefinitions,
  certificateSigningRequestDefinition,
  runtimeClassDefinition,
  ...flowControlDefinitions,
] as ResourceDefinition[];

const builtinByKind = new Map(
  builtinDefinitions.map((d) => [`${d.descriptor.group}/${d.descriptor.kind}`, d]),
);

/**
 * The definition to serve a descriptor with: the built-in kind's parts under
 * the given descriptor, or the defaults for a kind reconcile does not know
 * (name validation only, the default table).
 */
export function definitionFor(descriptor: ResourceDescriptor): ResourceDefinition {
  const builtin = builtinByKind.get(`${descriptor.group}/${descriptor.kind}`);
  if (builtin === undefined) return defineKind({ descriptor });
  return builtin.descriptor === descriptor ? builtin : Object.freeze({ ...builtin, descriptor });
}
