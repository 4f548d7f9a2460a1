import {
  defineResource,
  type KubeObject,
  newBadRequest,
  newConflict,
  newInvalid,
  type Pod,
  type PodCondition,
  pods,
} from "@reconcile/api";
import { copyJson, isJsonObject } from "../json.js";
import { FieldErrors } from "../registry/field-errors.js";
import { defineKind, type SubresourceHandler } from "./definition.js";

/**
 * `POST pods/{name}/binding` (kube-apiserver's `BindingREST`): one write that
 * assigns the pod to the Binding's node.
 */
export const podBindingHandler: SubresourceHandler = {
  kind: { group: "", version: "v1", kind: "Binding" },
  async create(store, namespace, name, body, options) {
    const binding = decodeBinding(body, name);
    await store.update(namespace, name, (existing) => assignPod(existing, binding, store.now()), options);
  },
};

/** What a successful binding is answered with (`metav1.Status{Status: Success}`, 201). */
const bound = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 } as KubeObject;

/**
 * `POST /api/v1/namespaces/{ns}/bindings` (the legacy `bindings` resource,
 * what custom schedulers and the Python client's `create_namespaced_binding`
 * post to): the pod is the Binding's own `metadata.name`, bound as through
 * `pods/{name}/binding`. Nothing is stored; create is the only verb.
 */
export const bindingDefinition = defineKind({
  descriptor: defineResource({
    group: "",
    version: "v1",
    kind: "Binding",
    plural: "bindings",
    namespaced: true,
  }),
  verbs: ["create"],
  source: {
    list: () => [],
    async create(namespace, body, options, post) {
      const meta = isJsonObject(body) && isJsonObject(body.metadata) ? body.metadata : {};
      const name = typeof meta.name === "string" ? meta.name : "";
      await post(pods, namespace, name, "binding", body, options);
      return copyJson(bound);
    },
  },
});

/** A core/v1 Binding: the pod (by metadata) and the node it goes to. */
export interface Binding {
  name: string;
  uid: string | undefined;
  resourceVersion: string | undefined;
  annotations: Record<string, string>;
  nodeName: string;
}

const podsBinding = { group: "", resource: "pods/binding" };

/**
 * Reads and checks a Binding posted to `pods/{name}/binding` (kube-apiserver's
 * `BindingREST.Create` and `ValidatePodBinding`): its name must be the URL's
 * (400), `target.kind` empty or `Node` and `target.name` set (422). The node
 * itself is not looked up, as upstream.
 */
export function decodeBinding(body: unknown, urlName: string): Binding {
  if (!isJsonObject(body)) throw newBadRequest("the request body is not a Binding object");
  const meta = isJsonObject(body.metadata) ? body.metadata : {};
  const name = typeof meta.name === "string" ? meta.name : "";
  if (name !== urlName) throw newBadRequest("name in URL does not match name in Binding object");
  const target = isJsonObject(body.target) ? body.target : {};
  const kind = typeof target.kind === "string" ? target.kind : "";
  const nodeName = typeof target.name === "string" ? target.name : "";
  const errors = new FieldErrors();
  if (kind !== "" && kind !== "Node") errors.notSupported("target.kind", kind, ["Node", "<empty>"]);
  if (nodeName === "") errors.required("target.name");
  if (!errors.empty) throw newInvalid({ group: "", kind: "Binding" }, name, errors.list);
  const annotations: Record<string, string> = {};
  if (isJsonObject(meta.annotations)) {
    for (const [key, value] of Object.entries(meta.annotations)) {
      if (typeof value === "string") annotations[key] = value;
    }
  }
  return {
    name,
    uid: typeof meta.uid === "string" && meta.uid !== "" ? meta.uid : undefined,
    resourceVersion:
      typeof meta.resourceVersion === "string" && meta.resourceVersion !== ""
        ? meta.resourceVersion
        : undefined,
    annotations,
    nodeName,
  };
}

/**
 * The pod after the binding (upstream `setPodNodeAndMetadata`): `spec.nodeName`
 * set, the Binding's annotations merged, `PodScheduled=True`. A pod being
 * deleted, already assigned, still gated, or not matching the Binding's uid or
 * resourceVersion is a 409 Conflict.
 */
export function assignPod(existing: KubeObject, binding: Binding, now: string): KubeObject {
  const pod = copyJson(existing) as Pod & { metadata: NonNullable<Pod["metadata"]> };
  const meta = pod.metadata;
  const name = meta.name ?? binding.name;
  if (binding.uid !== undefined && binding.uid !== meta.uid) {
    throw newConflict(
      { group: "", resource: "pods" },
      name,
      `Precondition failed: UID in precondition: ${binding.uid}, UID in object meta: ${meta.uid ?? ""}`,
    );
  }
  if (binding.resourceVersion !== undefined && binding.resourceVersion !== meta.resourceVersion) {
    throw newConflict({ group: "", resource: "pods" }, name);
  }
  if (meta.deletionTimestamp) {
    throw newConflict(podsBinding, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  }
  const spec = (pod.spec ??= { containers: [] });
  if (spec.nodeName) {
    throw newConflict(
      podsBinding,
      name,
      `pod ${name} is already assigned to node ${JSON.stringify(spec.nodeName)}`,
    );
  }
  if ((spec.schedulingGates ?? []).length > 0) {
    throw newConflict(podsBinding, name, `pod ${name} has non-empty .spec.schedulingGates`);
  }
  spec.nodeName = binding.nodeName;
  if (Object.keys(binding.annotations).length > 0) {
    (meta as { annotations?: Record<string, string> }).annotations = {
      ...meta.annotations,
      ...binding.annotations,
    };
  }
  const writable = pod as { status?: { conditions?: PodCondition[] } };
  const status = (writable.status ??= {});
  const conditions = (status.conditions ??= []);
  const at = conditions.findIndex((condition) => condition.type === "PodScheduled");
  const previous = at === -1 ? undefined : conditions[at];
  const condition: PodCondition = {
    type: "PodScheduled",
    status: "True",
    lastTransitionTime:
      previous?.status === "True" && previous.lastTransitionTime ? previous.lastTransitionTime : now,
  };
  if (at === -1) conditions.push(condition);
  else conditions[at] = condition;
  return pod as KubeObject;
}
