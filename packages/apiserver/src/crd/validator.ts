import { newInvalid, type StatusError } from "@reconcile/api";
import type { CustomResourceDefinition as KubernetesTypesDefinition } from "kubernetes-types/apiextensions/v1.js";
import { decodeCustomResource, validateCustomResource } from "./custom-resource.js";
import {
  type CustomResourceDefinition,
  defaultCustomResourceDefinition,
  validateCustomResourceDefinition,
} from "./definition-validation.js";
import type { JSONSchemaProps, JsonObject } from "./schema.js";

/** The API server's checks of one custom kind, to run in a unit test without a server. */
export interface CustomResourceValidator<T = JsonObject> {
  /** The CRD after the server's defaulting. */
  readonly definition: CustomResourceDefinition;
  /** The version whose schema is used. */
  readonly version: string;
  /**
   * What the server would store of `object` on create: a copy with unknown
   * fields pruned (listed in `unknownFields`, as `fieldValidation=Strict`
   * would refuse them), nulls of non-nullable fields dropped, and defaults applied.
   */
  default(object: T): { object: T; unknownFields: string[] };
  /**
   * The server's verdict on `object` once defaulted (with `old`, on an
   * update: transition rules run): undefined when it would be stored, else
   * the 422 `StatusError` with the server's message and causes.
   */
  validate(object: T, old?: T): StatusError | undefined;
}

/**
 * The API server's own schema code for `crd` (structural schema, pruning,
 * defaulting, OpenAPI validation, list types, embedded resources, CEL with
 * its cost limits), as a validator. Throws the server's 422 if the CRD
 * itself would be refused.
 */
export function customResourceValidator<T = JsonObject>(
  crd: CustomResourceDefinition | KubernetesTypesDefinition,
  version?: string,
): CustomResourceValidator<T> {
  const definition = structuredClone(crd) as CustomResourceDefinition;
  defaultCustomResourceDefinition(definition);
  const errors = validateCustomResourceDefinition(definition);
  const name = definition.metadata?.name ?? "";
  if (errors.length > 0) {
    throw newInvalid({ group: "apiextensions.k8s.io", kind: "CustomResourceDefinition" }, name, errors);
  }
  const versions = definition.spec.versions;
  const chosen =
    version === undefined
      ? (versions.find((v) => v.storage) ?? versions[0])
      : versions.find((v) => v.name === version);
  if (chosen === undefined) {
    throw new TypeError(
      `${name} has no version ${JSON.stringify(version)} (it has ${versions.map((v) => v.name).join(", ")})`,
    );
  }
  const schema = (chosen.schema?.openAPIV3Schema ?? {
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true,
  }) as JSONSchemaProps;
  const gk = { group: definition.spec.group, kind: definition.spec.names.kind };
  return {
    definition,
    version: chosen.name,
    default(object) {
      const copy = structuredClone(object) as JsonObject;
      const { unknownFields } = decodeCustomResource(copy, schema);
      return { object: copy as T, unknownFields };
    },
    validate(object, old) {
      const found = validateCustomResource(object as JsonObject, schema, old as JsonObject | undefined);
      if (found.length === 0) return undefined;
      const objectName = (object as { metadata?: { name?: string } }).metadata?.name ?? "";
      return newInvalid(gk, objectName, found);
    },
  };
}
