import { csiNodes, type DeepReadonly, isAlreadyExists, isNotFound } from "@reconcile/api";
import type { Client } from "@reconcile/client";
import type { Node } from "kubernetes-types/core/v1.js";
import type { CSINode } from "kubernetes-types/storage/v1.js";

/**
 * The in-tree volume plugins whose volumes CSI drivers serve in 1.32, as the
 * kubelet's CSI node info manager lists them on its CSINode.
 */
export const migratedPluginsAnnotation = "storage.alpha.kubernetes.io/migrated-plugins";
const migratedPlugins = [
  "kubernetes.io/aws-ebs",
  "kubernetes.io/azure-disk",
  "kubernetes.io/azure-file",
  "kubernetes.io/cinder",
  "kubernetes.io/gce-pd",
  "kubernetes.io/portworx-volume",
  "kubernetes.io/vsphere-volume",
].join(",");

/** The CSINode the kubelet creates for its Node: no drivers yet, owned by the Node. */
export function initialCSINode(node: DeepReadonly<Node>): CSINode {
  const name = node.metadata?.name ?? "";
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "CSINode",
    metadata: {
      name,
      annotations: { [migratedPluginsAnnotation]: migratedPlugins },
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: node.metadata?.uid ?? "" }],
    },
    // No drivers yet: the kubelet's empty list travels as protobuf, where it is absent, so the
    // server stores none (`drivers: null`).
    spec: {} as CSINode["spec"],
  };
}

/**
 * Creates the node's CSINode as the kubelet's CSI node info manager does
 * once the Node is registered (`InitializeCSINodeWithAnnotation`). One that
 * exists is kept; a server that does not serve CSINodes is left alone.
 * Resolves to whether a CSINode was written.
 */
export async function registerCSINode(
  client: Client,
  node: DeepReadonly<Node>,
  signal: AbortSignal,
): Promise<boolean> {
  try {
    await client.resource(csiNodes).create(initialCSINode(node), { signal });
    return true;
  } catch (error) {
    if (isAlreadyExists(error) || isNotFound(error)) return false;
    throw error;
  }
}
