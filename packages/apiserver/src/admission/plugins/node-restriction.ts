import {
  jsonEqual,
  type KubeObject,
  type Lease,
  type Node,
  newNotFound,
  nodes,
  type Pod,
  pods,
} from "@reconcile/api";
import type { PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import { nodeIdentity } from "../../http/auth/node-authorizer.js";
import { podReferences } from "../../http/auth/node-graph.js";
import {
  type AdmissionAttributes,
  type AdmissionContext,
  type AdmissionPlugin,
  forbidden,
  resourceKey,
} from "../plugin.js";

const mirrorPodAnnotation = "kubernetes.io/config.mirror";
const nodeLeaseNamespace = "kube-node-lease";

/** The labels a kubelet may set on its own Node (upstream's `kubeletapis.IsKubeletLabel`). */
const kubeletLabels = new Set([
  "kubernetes.io/hostname",
  "kubernetes.io/instance-type",
  "kubernetes.io/os",
  "kubernetes.io/arch",
  "beta.kubernetes.io/instance-type",
  "beta.kubernetes.io/os",
  "beta.kubernetes.io/arch",
  "failure-domain.beta.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
  "node.kubernetes.io/instance-type",
]);
const kubeletLabelNamespaces = ["kubelet.kubernetes.io", "node.kubernetes.io"];

/**
 * NodeRestriction (`plugin/pkg/admission/noderestriction`): what a node
 * (`system:node:<name>` in `system:nodes`) writes is limited to itself — its
 * own Node (no new taints, no labels outside the kubelet's set), mirror pods
 * bound to it and owned by it, the status, eviction and deletion of pods bound
 * to it, its own Lease and CSINode, PVC status capacity and conditions, and
 * tokens bound to its own pods. Requests of other users pass untouched.
 */
export function nodeRestriction(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "NodeRestriction",
    resources: [
      "/pods",
      "/nodes",
      "/persistentvolumeclaims",
      "/serviceaccounts",
      "coordination.k8s.io/leases",
      "storage.k8s.io/csinodes",
    ],
    async admit(a) {
      if (a.user === undefined) return;
      const node = nodeIdentity({ username: a.user.username, groups: [...a.user.groups] });
      if (node === undefined) return;
      if (node === "")
        throw forbidden(a, `could not determine node from user ${JSON.stringify(a.user.username)}`);
      switch (resourceKey(a.resource)) {
        case "/pods":
          if (a.subresource === "") return admitPod(context, node, a);
          if (a.subresource === "status") return admitPodStatus(node, a);
          if (a.subresource === "eviction") return admitEviction(context, node, a);
          throw forbidden(
            a,
            `unexpected pod subresource ${JSON.stringify(a.subresource)}, only 'status' and 'eviction' are allowed`,
          );
        case "/nodes":
          return admitNode(node, a);
        case "/persistentvolumeclaims":
          if (a.subresource !== "status") throw forbidden(a, "may only update PVC status");
          return admitClaimStatus(node, a);
        case "/serviceaccounts":
          return admitToken(context, node, a);
        case "coordination.k8s.io/leases":
          return admitLease(node, a);
        case "storage.k8s.io/csinodes":
          if ((a.operation === "CREATE" ? a.object?.metadata?.name : a.name) !== node)
            throw forbidden(a, "can only access CSINode with the same name as the requesting node");
          return;
      }
    },
  };
}

async function boundPod(context: AdmissionContext, namespace: string, name: string): Promise<Pod> {
  const pod = await context.get(pods, namespace, name);
  if (pod === undefined) throw newNotFound({ group: "", resource: "pods" }, name);
  return pod;
}

async function admitPod(context: AdmissionContext, node: string, a: AdmissionAttributes): Promise<void> {
  if (a.operation === "DELETE") {
    const pod = await boundPod(context, a.namespace, a.name);
    if (pod.spec?.nodeName !== node)
      throw forbidden(
        a,
        `node ${JSON.stringify(node)} can only delete pods with spec.nodeName set to itself`,
      );
    return;
  }
  if (a.operation !== "CREATE")
    throw forbidden(
      a,
      `unexpected operation ${JSON.stringify(a.operation)}, node ${JSON.stringify(node)} can only create and delete mirror pods`,
    );
  const pod = a.object as Pod;
  const n = JSON.stringify(node);
  if (pod.metadata?.annotations?.[mirrorPodAnnotation] === undefined)
    throw forbidden(
      a,
      `pod does not have ${JSON.stringify(mirrorPodAnnotation)} annotation, node ${n} can only create mirror pods`,
    );
  if (pod.spec?.nodeName !== node)
    throw forbidden(a, `node ${n} can only create pods with spec.nodeName set to itself`);
  const owners = pod.metadata?.ownerReferences ?? [];
  if (owners.length > 1)
    throw forbidden(a, `node ${n} can only create pods with a single owner reference set to itself`);
  const owner = owners[0];
  if (owner === undefined || owner.apiVersion !== "v1" || owner.kind !== "Node" || owner.name !== node)
    throw forbidden(a, `node ${n} can only create pods with an owner reference set to itself`);
  if (owner.controller !== true)
    throw forbidden(a, `node ${n} can only create pods with a controller owner reference set to itself`);
  if (owner.blockOwnerDeletion === true)
    throw forbidden(a, `node ${n} must not set blockOwnerDeletion on an owner reference`);
  const own = await context.get(nodes, "", node);
  if (own === undefined) throw newNotFound({ group: "", resource: "nodes" }, node);
  if (owner.uid !== own.metadata?.uid)
    throw forbidden(a, `node ${node} UID mismatch: expected ${owner.uid} got ${own.metadata?.uid ?? ""}`);
  const spec = pod.spec;
  if (spec.serviceAccountName)
    throw forbidden(a, `node ${n} can not create pods that reference a service account`);
  // What the pod names, as the Node authorizer's graph reads it.
  const named = podReferences(pod);
  if (named.some((key) => key.startsWith("secret/")))
    throw forbidden(a, `node ${n} can not create pods that reference secrets`);
  if (named.some((key) => key.startsWith("configmap/")))
    throw forbidden(a, `node ${n} can not create pods that reference configmaps`);
  const volumes = spec.volumes ?? [];
  if (
    volumes.some((v) =>
      (v.projected?.sources ?? []).some((s) => (s as { clusterTrustBundle?: unknown }).clusterTrustBundle),
    )
  )
    throw forbidden(a, `node ${n} can not create pods that reference clustertrustbundles`);
  if (volumes.some((v) => v.persistentVolumeClaim))
    throw forbidden(a, `node ${n} can not create pods that reference persistentvolumeclaims`);
}

function admitPodStatus(node: string, a: AdmissionAttributes): void {
  if (a.operation !== "UPDATE") throw forbidden(a, `unexpected operation ${JSON.stringify(a.operation)}`);
  const old = a.oldObject as Pod;
  const pod = a.object as Pod;
  const n = JSON.stringify(node);
  if (old.spec?.nodeName !== node)
    throw forbidden(a, `node ${n} can only update pod status for pods with spec.nodeName set to itself`);
  if (!jsonEqual(old.metadata?.labels ?? {}, pod.metadata?.labels ?? {}))
    throw forbidden(a, `node ${n} cannot update labels through pod status`);
  const claims = (p: Pod) =>
    (p.status?.resourceClaimStatuses ?? []).map((c) => [c.name, c.resourceClaimName ?? null]);
  if (!jsonEqual(claims(old), claims(pod)))
    throw forbidden(a, `node ${n} cannot update resource claim statues`);
}

async function admitEviction(context: AdmissionContext, node: string, a: AdmissionAttributes): Promise<void> {
  if (a.operation !== "CREATE") throw forbidden(a, `unexpected operation ${a.operation}`);
  const name = a.name || (a.object?.metadata?.name ?? "");
  if (name === "") throw forbidden(a, "could not determine pod from request data");
  const pod = await boundPod(context, a.namespace, name);
  if (pod.spec?.nodeName !== node)
    throw forbidden(a, `node ${node} can only evict pods with spec.nodeName set to itself`);
}

function admitNode(node: string, a: AdmissionAttributes): void {
  const n = JSON.stringify(node);
  const requested = a.operation === "CREATE" ? (a.object?.metadata?.name ?? a.name) : a.name;
  if (requested !== node)
    throw forbidden(a, `node ${n} is not allowed to modify node ${JSON.stringify(requested)}`);
  const object = a.object as Node | undefined;
  if (a.operation === "CREATE" && object !== undefined) {
    if ((object.spec as { configSource?: unknown } | undefined)?.configSource != null)
      throw forbidden(a, `node ${n} is not allowed to create pods with a non-nil configSource`);
    const labels = forbiddenLabels(modifiedLabels(object.metadata?.labels, undefined));
    if (labels.length > 0)
      throw forbidden(a, `node ${n} is not allowed to set the following labels: ${labels.join(", ")}`);
  }
  if (a.operation === "UPDATE" && object !== undefined) {
    const old = a.oldObject as Node;
    const source = (o: Node) => (o.spec as { configSource?: unknown } | undefined)?.configSource;
    if (source(object) != null && !jsonEqual(source(object), source(old) ?? null))
      throw forbidden(a, `node ${n} is not allowed to update configSource to a new non-nil configSource`);
    if (!jsonEqual(object.spec?.taints ?? [], old.spec?.taints ?? []))
      throw forbidden(a, `node ${n} is not allowed to modify taints`);
    const labels = forbiddenLabels(modifiedLabels(object.metadata?.labels, old.metadata?.labels));
    if (labels.length > 0) throw forbidden(a, `is not allowed to modify labels: ${labels.join(", ")}`);
  }
}

/** The keys whose values differ between two label sets, sorted. */
function modifiedLabels(
  a: Record<string, string> | undefined,
  b: Record<string, string> | undefined,
): string[] {
  const keys = new Set<string>();
  for (const [k, v] of Object.entries(a ?? {})) if (b?.[k] !== v) keys.add(k);
  for (const [k, v] of Object.entries(b ?? {})) if (a?.[k] !== v) keys.add(k);
  return [...keys].sort();
}

function labelNamespace(key: string): string {
  const slash = key.indexOf("/");
  return slash < 0 ? "" : key.slice(0, slash);
}

const inDomain = (namespace: string, domain: string) =>
  namespace === domain || namespace.endsWith(`.${domain}`);

/** The labels a node may not add, remove or change: `node-restriction.kubernetes.io/`, and Kubernetes' own outside the kubelet's set. */
function forbiddenLabels(keys: readonly string[]): string[] {
  return keys.filter((key) => {
    const namespace = labelNamespace(key);
    if (inDomain(namespace, "node-restriction.kubernetes.io")) return true;
    const kubernetes = inDomain(namespace, "kubernetes.io") || inDomain(namespace, "k8s.io");
    const kubelet = kubeletLabels.has(key) || kubeletLabelNamespaces.some((d) => inDomain(namespace, d));
    return kubernetes && !kubelet;
  });
}

function admitClaimStatus(node: string, a: AdmissionAttributes): void {
  if (a.operation !== "UPDATE") throw forbidden(a, `unexpected operation ${JSON.stringify(a.operation)}`);
  const comparable = (claim: KubeObject | undefined) => {
    const { metadata, status, ...rest } = (claim ?? {}) as PersistentVolumeClaim;
    const { resourceVersion: _rv, managedFields: _mf, ...meta } = metadata ?? {};
    const {
      capacity: _capacity,
      conditions: _conditions,
      allocatedResourceStatuses: _statuses,
      allocatedResources: _allocated,
      ...statusRest
    } = status ?? {};
    return { ...rest, metadata: meta, status: statusRest };
  };
  if (!jsonEqual(comparable(a.oldObject), comparable(a.object)))
    throw forbidden(
      a,
      `node ${JSON.stringify(node)} is not allowed to update fields other than status.capacity and status.conditions`,
    );
}

async function admitToken(context: AdmissionContext, node: string, a: AdmissionAttributes): Promise<void> {
  if (a.operation !== "CREATE" || a.subresource !== "token") return;
  const ref = (
    a.object as {
      spec?: { boundObjectRef?: { apiVersion?: string; kind?: string; name?: string; uid?: string } };
    }
  )?.spec?.boundObjectRef;
  if (ref === undefined || ref.apiVersion !== "v1" || ref.kind !== "Pod" || !ref.name)
    throw forbidden(a, "node requested token not bound to a pod");
  if (!ref.uid) throw forbidden(a, "node requested token with a pod binding without a uid");
  const pod = await boundPod(context, a.namespace, ref.name);
  if (pod.metadata?.uid !== ref.uid)
    throw forbidden(
      a,
      `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  if (pod.spec?.nodeName !== node)
    throw forbidden(a, "node requested token bound to a pod scheduled on a different node");
}

function admitLease(node: string, a: AdmissionAttributes): void {
  if (a.namespace !== nodeLeaseNamespace)
    throw forbidden(
      a,
      `can only access leases in the ${JSON.stringify(nodeLeaseNamespace)} system namespace`,
    );
  const name = a.operation === "CREATE" ? (a.object as Lease | undefined)?.metadata?.name : a.name;
  if (name !== node)
    throw forbidden(a, "can only access node lease with the same name as the requesting node");
}
