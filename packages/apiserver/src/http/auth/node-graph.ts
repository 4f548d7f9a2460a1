import type { Pod } from "@reconcile/api";
import type { PersistentVolume } from "kubernetes-types/core/v1.js";

/** The kinds of object the Node authorizer relates to nodes. */
export type GraphKind = "pod" | "secret" | "configmap" | "pvc" | "pv" | "serviceaccount" | "resourceclaim";

type Container = NonNullable<NonNullable<Pod["spec"]>["containers"]>[number];
type Volume = NonNullable<NonNullable<Pod["spec"]>["volumes"]>[number];

/**
 * Which node may read what (upstream's node authorizer graph, from its pod
 * and PersistentVolume informers): a pod bound to a node relates the node to
 * the pod and to every Secret, ConfigMap, PersistentVolumeClaim,
 * ServiceAccount and ResourceClaim the pod names; a PersistentVolume relates
 * to the claim it is bound to, and the Secrets it names to the volume.
 */
export class NodeGraph {
  /** Each pod bound to a node: its node and the keys of what it names (itself included). */
  readonly #pods = new Map<string, { node: string; keys: string[] }>();
  /** Key (`secret/ns/name`) → node → how many pods on that node name it. */
  readonly #nodesOf = new Map<string, Map<string, number>>();
  /** Each PersistentVolume: the claim key it is bound to and the Secret keys it names. */
  readonly #volumes = new Map<string, { claim: string | undefined; secrets: string[] }>();
  /** Secret key → the PersistentVolumes that name it. */
  readonly #volumesOfSecret = new Map<string, Set<string>>();

  /** A pod added, changed or deleted. Pods not bound to a node are not in the graph. */
  pod(type: "ADDED" | "MODIFIED" | "DELETED", pod: Pod): void {
    const namespace = pod.metadata?.namespace ?? "";
    const id = `${namespace}/${pod.metadata?.name ?? ""}`;
    const before = this.#pods.get(id);
    const node = pod.spec?.nodeName ?? "";
    if (type !== "DELETED" && node !== "" && before?.node === node) return; // what a pod names is immutable
    if (before !== undefined) {
      for (const key of before.keys) this.#count(key, before.node, -1);
      this.#pods.delete(id);
    }
    if (type === "DELETED" || node === "") return;
    const keys = [...new Set(podReferences(pod))];
    for (const key of keys) this.#count(key, node, +1);
    this.#pods.set(id, { node, keys });
  }

  /** A PersistentVolume added, changed or deleted. */
  volume(type: "ADDED" | "MODIFIED" | "DELETED", volume: PersistentVolume): void {
    const name = volume.metadata?.name ?? "";
    for (const secret of this.#volumes.get(name)?.secrets ?? []) {
      const volumes = this.#volumesOfSecret.get(secret);
      volumes?.delete(name);
      if (volumes?.size === 0) this.#volumesOfSecret.delete(secret);
    }
    this.#volumes.delete(name);
    if (type === "DELETED") return;
    const ref = volume.spec?.claimRef;
    const claim = ref?.name ? `pvc/${ref.namespace ?? ""}/${ref.name}` : undefined;
    const secrets = [...new Set(volumeSecretKeys(volume))];
    this.#volumes.set(name, { claim, secrets });
    for (const secret of secrets) {
      let volumes = this.#volumesOfSecret.get(secret);
      if (volumes === undefined) this.#volumesOfSecret.set(secret, (volumes = new Set()));
      volumes.add(name);
    }
  }

  /** Whether a path leads from the object to `node` (upstream's `hasPathFrom`). */
  related(node: string, kind: GraphKind, namespace: string, name: string): boolean {
    if (kind === "pv") return this.#volumeRelated(node, name);
    const key = `${kind}/${namespace}/${name}`;
    if ((this.#nodesOf.get(key)?.get(node) ?? 0) > 0) return true;
    if (kind !== "secret") return false;
    for (const volume of this.#volumesOfSecret.get(key) ?? [])
      if (this.#volumeRelated(node, volume)) return true;
    return false;
  }

  #volumeRelated(node: string, name: string): boolean {
    const claim = this.#volumes.get(name)?.claim;
    return claim !== undefined && (this.#nodesOf.get(claim)?.get(node) ?? 0) > 0;
  }

  #count(key: string, node: string, delta: number): void {
    let nodes = this.#nodesOf.get(key);
    if (nodes === undefined) this.#nodesOf.set(key, (nodes = new Map()));
    const count = (nodes.get(node) ?? 0) + delta;
    if (count > 0) nodes.set(node, count);
    else nodes.delete(node);
    if (nodes.size === 0) this.#nodesOf.delete(key);
  }
}

/**
 * The keys (`secret/<ns>/<name>`, `configmap/…`, `pvc/…`, `serviceaccount/…`,
 * `resourceclaim/…`, and `pod/…` for itself) of the pod and of everything it
 * names (upstream's `VisitPodSecretNames`, `VisitPodConfigmapNames`, claims).
 */
export function podReferences(pod: Pod): string[] {
  const namespace = pod.metadata?.namespace ?? "";
  const podName = pod.metadata?.name ?? "";
  const spec = pod.spec ?? ({} as NonNullable<Pod["spec"]>);
  const keys = [`pod/${namespace}/${podName}`];
  const add = (kind: GraphKind, name: string | undefined) => {
    if (name) keys.push(`${kind}/${namespace}/${name}`);
  };
  add("serviceaccount", spec.serviceAccountName);
  for (const secret of spec.imagePullSecrets ?? []) add("secret", secret.name);
  const containers: Container[] = [
    ...(spec.initContainers ?? []),
    ...(spec.containers ?? []),
    ...((spec.ephemeralContainers ?? []) as Container[]),
  ];
  for (const container of containers) {
    for (const env of container.env ?? []) {
      add("secret", env.valueFrom?.secretKeyRef?.name);
      add("configmap", env.valueFrom?.configMapKeyRef?.name);
    }
    for (const from of container.envFrom ?? []) {
      add("secret", from.secretRef?.name);
      add("configmap", from.configMapRef?.name);
    }
  }
  for (const volume of spec.volumes ?? []) {
    for (const [kind, name] of volumeReferences(volume)) add(kind, name);
    if (volume.ephemeral !== undefined) add("pvc", `${podName}-${volume.name}`);
  }
  for (const claim of pod.status?.resourceClaimStatuses ?? []) add("resourceclaim", claim.resourceClaimName);
  return keys;
}

/** What one pod volume names. */
function volumeReferences(volume: Volume): [GraphKind, string | undefined][] {
  const found: [GraphKind, string | undefined][] = [
    ["secret", volume.secret?.secretName],
    ["configmap", volume.configMap?.name],
    ["pvc", volume.persistentVolumeClaim?.claimName],
    ["secret", volume.azureFile?.secretName],
    ["secret", volume.cephfs?.secretRef?.name],
    ["secret", volume.cinder?.secretRef?.name],
    ["secret", volume.flexVolume?.secretRef?.name],
    ["secret", volume.iscsi?.secretRef?.name],
    ["secret", volume.rbd?.secretRef?.name],
    ["secret", volume.scaleIO?.secretRef?.name],
    ["secret", volume.storageos?.secretRef?.name],
    ["secret", volume.csi?.nodePublishSecretRef?.name],
  ];
  for (const source of volume.projected?.sources ?? []) {
    found.push(["secret", source.secret?.name], ["configmap", source.configMap?.name]);
  }
  return found;
}

/** The Secrets a PersistentVolume names (upstream's `VisitPVSecretNames`), as keys. */
function volumeSecretKeys(volume: PersistentVolume): string[] {
  const spec = volume.spec ?? {};
  const claimNamespace = spec.claimRef?.namespace ?? "";
  const refs: { name?: string | undefined; namespace?: string | undefined }[] = [];
  const csi = spec.csi;
  for (const ref of [
    csi?.controllerPublishSecretRef,
    csi?.nodeStageSecretRef,
    csi?.nodePublishSecretRef,
    csi?.controllerExpandSecretRef,
    csi?.nodeExpandSecretRef,
    spec.cephfs?.secretRef,
    spec.cinder?.secretRef,
    spec.flexVolume?.secretRef,
    spec.iscsi?.secretRef,
    spec.rbd?.secretRef,
    spec.scaleIO?.secretRef,
    spec.storageos?.secretRef,
  ])
    if (ref !== undefined) refs.push(ref);
  const keys = refs
    .filter((ref) => ref.name)
    .map((ref) => `secret/${ref.namespace || claimNamespace}/${ref.name}`);
  if (spec.azureFile?.secretName)
    keys.push(`secret/${spec.azureFile.secretNamespace || claimNamespace}/${spec.azureFile.secretName}`);
  return keys;
}
