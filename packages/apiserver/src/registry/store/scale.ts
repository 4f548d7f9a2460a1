import {
  type KubeObject,
  newBadRequest,
  newInvalid,
  newMethodNotSupported,
  type Scale,
} from "@reconcile/api";
import { copyJson, isJsonObject } from "../../json.js";
import { objectMetaSchema, typeProblem } from "../schema.js";
import type { Strategy } from "../strategy.js";
import type { DryRunOption, StoreCore } from "./context.js";
import { getObject } from "./reads.js";
import { guaranteedUpdate } from "./update.js";

type ScaleRules = NonNullable<Strategy["scale"]>;

/** GET `/scale`: the object's replicas and selector as an `autoscaling/v1` Scale. */
export async function getScale(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
): Promise<Scale> {
  const scale = scaleOf(store);
  return toScale(scale, await getObject(store, namespace, name));
}

/** PUT `/scale`: sets the replicas (and nothing else) through the update path. */
export async function updateScale(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
  body: unknown,
  options: DryRunOption,
): Promise<Scale> {
  const scale = scaleOf(store);
  if (!isJsonObject(body)) throw newBadRequest("the request body must be a Scale object");
  const requested = body as Scale;
  const problem = typeProblem(
    requested,
    { fields: { metadata: objectMetaSchema, spec: { fields: { replicas: "integer" } } } },
    "",
  );
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
  const precondition = requested.metadata?.resourceVersion || undefined;
  const ns = store.resource.namespaced ? namespace : undefined;
  const scaleOptions = { ...options, subresource: "scale" as const };
  const updated = await guaranteedUpdate(store, ns, name, precondition, scaleOptions, (existing) => {
    const copy = copyJson(existing);
    scale.setReplicas(copy, replicas);
    return copy;
  });
  return toScale(scale, updated);
}

function scaleOf(store: StoreCore): ScaleRules {
  const scale = store.definition.strategy.scale;
  if (scale === undefined || !store.resource.subresources.includes("scale"))
    throw newMethodNotSupported(store.gr, "scale");
  return scale;
}

function toScale(scale: ScaleRules, object: KubeObject): Scale {
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
    spec: { replicas: scale.replicas(object) },
    status: { replicas: scale.statusReplicas(object), selector: scale.selector(object) },
  };
}
