import { copyJson, newNotFound, type Pod, pods, serviceAccounts } from "@reconcile/api";
import { type Random, realRandom } from "@reconcile/clock";
import type { Container, ServiceAccount, Volume } from "kubernetes-types/core/v1.js";
import { randomSuffix } from "../../registry/name-generator.js";
import {
  type AdmissionAttributes,
  type AdmissionContext,
  type AdmissionPlugin,
  forbidden,
  resourceKey,
  whenKnown,
} from "../plugin.js";

/** Where the token volume is mounted in every container. */
export const serviceAccountTokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount";
/** The prefix of the token volume's name (a random suffix follows). */
export const serviceAccountVolumePrefix = "kube-api-access-";
/** A mirror pod (the kubelet's copy of a static pod) carries this annotation. */
const mirrorPodAnnotation = "kubernetes.io/config.mirror";
/** How long a projected token lives: upstream's `WarnOnlyBoundTokenExpirationSeconds`. */
const tokenExpirationSeconds = 3607;

/**
 * ServiceAccount: a new pod runs as `default` unless it names its
 * ServiceAccount, which must exist (403 otherwise); unless the pod or its
 * ServiceAccount opts out, every container mounts a projected volume with a
 * bound token, the cluster's CA bundle and the namespace at
 * `/var/run/secrets/kubernetes.io/serviceaccount`. Mirror pods are left alone.
 */
export function serviceAccountPlugin(context: AdmissionContext, shared = true): AdmissionPlugin {
  const mounting: Mounting = { random: context.random, shared };
  return {
    name: "ServiceAccount",
    resources: [resourceKey(pods)],
    admit(a) {
      if (a.operation !== "CREATE" || a.subresource !== "" || a.object === undefined) return;
      const pod = a.object as Pod;
      if (pod.metadata?.annotations?.[mirrorPodAnnotation] !== undefined) return;
      const spec = (pod.spec ??= { containers: [] });
      spec.serviceAccountName ||= "default";
      const name = spec.serviceAccountName;
      return whenKnown(
        context.get<ServiceAccount>(serviceAccounts, a.namespace, name),
        admitWith,
        a,
        mounting,
      );
    },
  };
}

/** How the plugin mounts tokens: where volume names' suffixes come from, and whether the projection is shared. */
interface Mounting {
  readonly random: Random;
  readonly shared: boolean;
}

/** The pod of `a` runs as `account`, which must exist, and mounts its token unless either opts out. */
function admitWith(account: ServiceAccount | undefined, a: AdmissionAttributes, mounting: Mounting): void {
  const pod = a.object as Pod;
  const spec = pod.spec!;
  if (account === undefined) {
    const name = spec.serviceAccountName!;
    const missing = newNotFound({ group: "", resource: "serviceaccount" }, name);
    throw forbidden(a, `error looking up service account ${a.namespace}/${name}: ${missing.message}`);
  }
  if (spec.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true)
    mountServiceAccountToken(pod, mounting.random, mounting.shared);
}

/**
 * Mounts the token volume in every container without a mount at the token
 * path, adding the volume if needed; a new volume's name ends in a suffix
 * drawn from `random`, and its projection is {@link tokenProjection} itself
 * when `shared`, else a copy of its own.
 */
export function mountServiceAccountToken(pod: Pod, random: Random = realRandom, shared = true): void {
  const spec = pod.spec!;
  let volumeName: string | undefined;
  for (const volume of spec.volumes ?? [])
    if (volume.name.startsWith(serviceAccountVolumePrefix)) {
      volumeName = volume.name;
      break;
    }
  const existing = volumeName !== undefined;
  volumeName ??= serviceAccountVolumePrefix + randomSuffix(random);
  let needed = false;
  for (const container of spec.initContainers ?? []) needed = mountToken(container, volumeName) || needed;
  for (const container of spec.containers ?? []) needed = mountToken(container, volumeName) || needed;
  if (!existing && needed)
    spec.volumes =
      spec.volumes === undefined
        ? [tokenVolume(volumeName, shared)]
        : [...spec.volumes, tokenVolume(volumeName, shared)];
}

/** Mounts the token volume in `container` unless something is mounted at the token path; says whether it did. */
function mountToken(container: Container, volumeName: string): boolean {
  const mounts = container.volumeMounts;
  if (mounts !== undefined)
    for (const m of mounts) if (m.mountPath === serviceAccountTokenMountPath) return false;
  const mount = { name: volumeName, readOnly: true, mountPath: serviceAccountTokenMountPath };
  container.volumeMounts = mounts === undefined ? [mount] : [...mounts, mount];
  return true;
}

/**
 * The projected volume: a bound token, `kube-root-ca.crt`'s `ca.crt`, and
 * the namespace. Every pod's volume holds the same projection object: a
 * stored object, and what it holds, is never changed in place (a write
 * stores a new object; clients get copies), so the pods of a cluster keep
 * one projection between them rather than a dozen objects each, unless a
 * plugin of the server's user could change it in place after this one. It
 * is not frozen: a client's copy of a pod must be as changeable as the rest
 * of it.
 */
function tokenVolume(name: string, shared: boolean): Volume {
  return { name, projected: shared ? tokenProjection : copyJson(tokenProjection) };
}

/** Exported for the test that checks no write changes it. */
export const tokenProjection: NonNullable<Volume["projected"]> = {
  defaultMode: 0o644,
  sources: [
    { serviceAccountToken: { expirationSeconds: tokenExpirationSeconds, path: "token" } },
    { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
    {
      downwardAPI: {
        items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
      },
    },
  ],
};
