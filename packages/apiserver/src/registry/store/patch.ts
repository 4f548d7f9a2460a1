import {
  apiVersionOf,
  type KubeObject,
  newBadRequest,
  newConflict,
  newNotFound,
  StatusError,
} from "@reconcile/api";
import { applyWithLastApplied } from "../../apply/index.js";
import { isJsonObject } from "../../json.js";
import { checkNesting } from "../../limits.js";
import { applyPatch, mergePatchShared, type PatchType } from "../patch.js";
import {
  applyTypeOf,
  asJson,
  managerOf,
  resetFieldsOf,
  versionConverter,
  withLaterConversions,
} from "./common.js";
import type { PatchOptions, StoreCore } from "./context.js";
import { createObject } from "./create.js";
import { decodeObject, jsonSize, requestTooLarge } from "./decode.js";
import { objectKey } from "./keys.js";
import { guaranteedUpdate } from "./update.js";

/**
 * PATCH, telling whether the object was created (an apply patch of an
 * absent object: 201, not 200) from the write itself, not from a second read
 * that a concurrent writer could make wrong (genericregistry.Store's `created`).
 */
export async function patchObject(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
  patchType: PatchType,
  patch: unknown,
  options: PatchOptions,
): Promise<{ object: KubeObject; created: boolean }> {
  const { resource, definition, context } = store;
  checkNesting(patch, "the patch");
  const size = jsonSize(patch);
  if (size > context.maxObjectBytes) throw requestTooLarge(context.maxObjectBytes);
  if (patchType === "apply") return applyObject(store, namespace, name, patch, options);
  const patchMeta = definition.patchMeta;
  if (patchType === "strategic-merge" && patchMeta === undefined)
    throw new StatusError({
      code: 415,
      reason: "UnsupportedMediaType",
      message:
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    });
  const ns = resource.namespaced ? namespace : undefined;
  const object = await guaranteedUpdate(store, ns, name, undefined, options, (existing) => {
    // Decoded into a private copy below: a merge patch need not copy the stored object first.
    const patched =
      patchType === "merge" && isJsonObject(patch)
        ? mergePatchShared(existing, patch)
        : applyPatch(patchType, existing, patch, patchMeta);
    if (!isJsonObject(patched))
      throw newBadRequest("the patch made the object something other than a JSON object");
    const decoded = decodeObject(
      definition,
      context.maxObjectBytes,
      patched,
      options.fieldValidation,
      "patch",
    );
    // As kube-apiserver's checkName: a patch may not rename the object or move it.
    const meta = decoded.metadata ?? {};
    if (meta.name !== undefined && meta.name !== name)
      throw newBadRequest(
        `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
      );
    if (ns && meta.namespace !== undefined && meta.namespace !== ns)
      throw newBadRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    return decoded;
  });
  return { object, created: false };
}

/**
 * Server-side apply (`application/apply-patch+yaml`): the configuration is
 * merged into the live object by the kind's list types and keys, fields the
 * manager dropped are removed, and a value another manager owns is a 409
 * unless `force` (see `apply/`). Creates the object when it is absent.
 */
async function applyObject(
  store: StoreCore,
  namespace: string | undefined,
  name: string,
  patch: unknown,
  options: PatchOptions,
): Promise<{ object: KubeObject; created: boolean }> {
  const { resource, definition, context } = store;
  if (!isJsonObject(patch)) throw newBadRequest("an apply patch must be a JSON object");
  const apiVersion = apiVersionOf(resource);
  if (patch.apiVersion !== apiVersion || patch.kind !== resource.kind) {
    const [group, version] = String(patch.apiVersion ?? "").includes("/")
      ? String(patch.apiVersion).split("/", 2)
      : ["", String(patch.apiVersion ?? "")];
    throw newBadRequest(`invalid object type: ${group}/${version}, Kind=${String(patch.kind ?? "")}`);
  }
  const meta = isJsonObject(patch.metadata) ? patch.metadata : {};
  if (meta.managedFields !== undefined && meta.managedFields !== null)
    throw newBadRequest("metadata.managedFields must be nil");
  if (meta.name !== name)
    throw newBadRequest(
      `the name of the object (${String(meta.name ?? "")}) does not match the name on the URL (${name})`,
    );
  const ns = resource.namespaced ? namespace : undefined;
  if (ns && meta.namespace !== undefined && meta.namespace !== null && meta.namespace !== ns)
    throw newBadRequest(
      `the namespace of the object (${String(meta.namespace)}) does not match the namespace on the request (${ns})`,
    );
  const subresource = options.subresource ?? "";
  const applyOptions = {
    manager: managerOf(options),
    apiVersion,
    force: options.force === true,
    now: new Date(context.clock.now()),
    type: applyTypeOf(store),
    subresource,
    resetFields: resetFieldsOf(definition, subresource),
    convert: versionConverter(store),
  };
  const qualifiedName = ns ? `${ns}/${name}` : name;
  const decodeConfig = () =>
    decodeObject(definition, context.maxObjectBytes, patch, undefined, "apply", qualifiedName);
  const key = objectKey(resource, namespace, name);
  if ((await context.storage.get(key)) === undefined) {
    // A subresource never creates its object (StatusREST's update forbids create).
    if (subresource !== "") throw newNotFound(store.gr, name);
    if (meta.uid !== undefined && meta.uid !== null && meta.uid !== "")
      throw newConflict(
        store.gr,
        name,
        `uid mismatch: the provided object specified uid ${String(meta.uid)}, and no existing object was found`,
      );
    const applied = applyWithLastApplied({
      ...applyOptions,
      live: undefined,
      config: asJson(decodeConfig()),
    });
    await options.mayCreate?.();
    const object = await createObject(store, namespace, applied, { ...options, managedFieldsComputed: true });
    return { object, created: true };
  }
  const object = await guaranteedUpdate(
    store,
    ns,
    name,
    undefined,
    { ...options, managedFieldsComputed: true },
    (existing) =>
      withLaterConversions(
        store,
        existing,
        (convert) =>
          applyWithLastApplied({
            ...applyOptions,
            convert,
            live: asJson(existing),
            config: asJson(decodeConfig()),
          }) as KubeObject,
      ),
  );
  return { object, created: false };
}
