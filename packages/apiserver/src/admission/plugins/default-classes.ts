import {
  ingressClasses,
  ingresses,
  type KubeObject,
  persistentVolumeClaims,
  type ResourceDescriptor,
  storageClasses,
} from "@reconcile/api";
import type { PersistentVolumeClaim } from "kubernetes-types/core/v1.js";
import type { Ingress } from "kubernetes-types/networking/v1.js";
import { type AdmissionContext, type AdmissionPlugin, resourceKey } from "../plugin.js";

/**
 * The default among `classes`: those annotated as the default, the newest
 * first, then by name (upstream's `GetDefaultClass`).
 */
async function defaultClass(
  context: AdmissionContext,
  resource: ResourceDescriptor,
  annotations: readonly string[],
): Promise<string | undefined> {
  const defaults = (await context.list<KubeObject>(resource, "")).filter((c) =>
    annotations.some((a) => c.metadata?.annotations?.[a] === "true"),
  );
  const created = (c: KubeObject) => Date.parse(c.metadata?.creationTimestamp ?? "") || 0;
  defaults.sort(
    (x, y) => created(y) - created(x) || (x.metadata?.name ?? "").localeCompare(y.metadata?.name ?? ""),
  );
  return defaults[0]?.metadata?.name;
}

/**
 * DefaultStorageClass: a new claim that names no StorageClass (an empty name
 * counts as naming one: "no class") gets the cluster's default class.
 */
export function defaultStorageClass(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "DefaultStorageClass",
    resources: [resourceKey(persistentVolumeClaims)],
    async admit(a) {
      if (a.operation !== "CREATE" || a.subresource !== "" || a.object === undefined) return;
      const claim = a.object as PersistentVolumeClaim;
      const beta = claim.metadata?.annotations?.["volume.beta.kubernetes.io/storage-class"];
      if (claim.spec?.storageClassName != null || beta !== undefined) return;
      const name = await defaultClass(context, storageClasses, [
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
      ]);
      if (name !== undefined) claim.spec = { ...claim.spec, storageClassName: name };
    },
  };
}

/** DefaultIngressClass: a new Ingress that names no IngressClass gets the cluster's default one. */
export function defaultIngressClass(context: AdmissionContext): AdmissionPlugin {
  return {
    name: "DefaultIngressClass",
    resources: [resourceKey(ingresses)],
    async admit(a) {
      if (a.operation !== "CREATE" || a.subresource !== "" || a.object === undefined) return;
      const ingress = a.object as Ingress;
      const legacy = ingress.metadata?.annotations?.["kubernetes.io/ingress.class"];
      if (ingress.spec?.ingressClassName != null || legacy !== undefined) return;
      const name = await defaultClass(context, ingressClasses, [
        "ingressclass.kubernetes.io/is-default-class",
      ]);
      if (name !== undefined) ingress.spec = { ...ingress.spec, ingressClassName: name };
    },
  };
}
