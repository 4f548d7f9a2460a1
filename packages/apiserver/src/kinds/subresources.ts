import { type KubeObject, newBadRequest, newInvalid, type Scale } from "@reconcile/api";
import { copyJson, isJsonObject } from "../json.js";
import { applyPatch } from "../registry/patch.js";
import { builtinDecoderSchema, typeProblem } from "../registry/schema.js";
import type { Strategy } from "../registry/strategy.js";
import type { SubresourceHandler, SubresourceStore } from "../registry/subresource-handler.js";

/**
 * `{name}/status` (kube-apiserver's StatusREST): reads the whole object;
 * writes change its status and nothing else, through the kind's status rules.
 */
export const statusSubresource: SubresourceHandler = {
  get: (store, namespace, name) => store.get(namespace, name),
  update: (store, namespace, name, body, options) =>
    store.replaceAs("status", namespace, name, body, options),
  patch: (store, namespace, name, patchType, patch, options) =>
    store.patchAs("status", namespace, name, patchType, patch, options),
};

/** `namespaces/{name}/finalize` (FinalizeREST): a PUT that changes `spec.finalizers` and nothing else. */
export const finalizeSubresource: SubresourceHandler = {
  update: (store, namespace, name, body, options) =>
    store.replaceAs("finalize", namespace, name, body, options),
};

/** The Scale every scale subresource reads and writes. */
const scaleKind = { group: "autoscaling", version: "v1", kind: "Scale" } as const;

type ScaleRules = NonNullable<Strategy["scale"]>;

/**
 * `{name}/scale` (ScaleREST) of a kind whose strategy says where its replicas
 * live: an `autoscaling/v1` Scale read from the object; a PUT or PATCH of it
 * sets the object's replicas (a spec change) and nothing else.
 */
export function scaleSubresource(rules: ScaleRules): SubresourceHandler {
  const get = async (store: SubresourceStore, namespace: string | undefined, name: string) =>
    toScale(rules, await store.get(namespace, name));
  const update = async (
    store: SubresourceStore,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: Parameters<NonNullable<SubresourceHandler["update"]>>[4],
  ): Promise<KubeObject> => {
    const { replicas, precondition } = readScale(body, name);
    const updated = await store.updateAs(
      "scale",
      namespace,
      name,
      precondition,
      (existing) => {
        const copy = copyJson(existing);
        rules.setReplicas(copy, replicas);
        return copy;
      },
      options,
    );
    return toScale(rules, updated);
  };
  return {
    kind: scaleKind,
    get,
    update,
    async patch(store, namespace, name, patchType, patch, options) {
      // The patch applies to the current Scale, whose resourceVersion is the base of the
      // patch, not a precondition (unless the patch set one).
      if (patchType === "apply")
        throw newBadRequest("apply patches are not supported on the scale subresource");
      const current = await get(store, namespace, name);
      const patched = applyPatch(patchType, current, patch);
      if (!isJsonObject(patched))
        throw newBadRequest("the patch made the Scale something other than an object");
      const patchedMeta = patched.metadata as { resourceVersion?: string } | undefined;
      if (patchedMeta !== undefined && patchedMeta.resourceVersion === current.metadata?.resourceVersion)
        delete patchedMeta.resourceVersion;
      return update(store, namespace, name, patched, options);
    },
  };
}

/** The handlers a kind's descriptor and strategy imply: `status` and `scale` where it serves them. */
export function impliedSubresources(
  served: readonly string[],
  strategy: Strategy,
): Record<string, SubresourceHandler> {
  const handlers: Record<string, SubresourceHandler> = {};
  if (served.includes("status")) handlers.status = statusSubresource;
  if (served.includes("scale") && strategy.scale !== undefined)
    handlers.scale = scaleSubresource(strategy.scale);
  return handlers;
}

/** A PUT body read as a Scale: the replicas to set and the resourceVersion it was based on. */
function readScale(body: unknown, name: string): { replicas: number; precondition: string | undefined } {
  if (!isJsonObject(body)) throw newBadRequest("the request body must be a Scale object");
  const requested = body as Scale;
  const problem = typeProblem(requested, builtinDecoderSchema("io.k8s.api.autoscaling.v1.Scale"), "");
  if (problem)
    throw newBadRequest(`Scale in version "autoscaling/v1" cannot be handled as a Scale: ${problem}`);
  if (requested.metadata?.name !== undefined && requested.metadata.name !== name)
    throw newBadRequest(
      `the name of the object (${requested.metadata.name}) does not match the name on the URL (${name})`,
    );
  const replicas = requested.spec?.replicas ?? 0;
  if (replicas < 0) {
    throw newInvalid({ group: "autoscaling", kind: "Scale" }, name, [
      {
        type: "FieldValueInvalid",
        field: "spec.replicas",
        message: `spec.replicas: Invalid value: ${replicas}: must be greater than or equal to 0`,
      },
    ]);
  }
  return { replicas, precondition: requested.metadata?.resourceVersion || undefined };
}

function toScale(rules: ScaleRules, object: KubeObject): Scale & KubeObject {
  const meta = object.metadata ?? {};
  return {
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: {
      name: meta.name!,
      ...(meta.namespace === undefined ? {} : { namespace: meta.namespace }),
      uid: meta.uid!,
      resourceVersion: meta.resourceVersion!,
      creationTimestamp: meta.creationTimestamp!,
    },
    spec: { replicas: rules.replicas(object) },
    status: { replicas: rules.statusReplicas(object), selector: rules.selector(object) },
  };
}
