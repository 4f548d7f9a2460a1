import type { KubeObject, ListMeta, ObjectMeta } from "@reconcile/api";
import { StatusError } from "@reconcile/api";
import type { MetadataForm } from "./negotiation.js";

// The metadata-only answers of kube-apiserver (`asPartialObjectMetadata` and
// `asPartialObjectMetadataList` of its response transformer): what a client
// that asks for `as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1` gets
// instead of whole objects.

/** A `meta.k8s.io` PartialObjectMetadata: an object's metadata alone. */
export interface PartialObjectMetadata {
  kind: "PartialObjectMetadata";
  apiVersion: string;
  metadata: ObjectMeta;
}

/** The Content-Type of a metadata-only answer. */
export function metadataContentType(form: MetadataForm): string {
  return `application/json;as=${form.kind};v=${form.version};g=meta.k8s.io`;
}

/** `object` as PartialObjectMetadata (its metadata shared, not copied: it is only serialized). */
export function partialObjectMetadata(object: KubeObject, form: MetadataForm): PartialObjectMetadata {
  return {
    kind: "PartialObjectMetadata",
    apiVersion: `meta.k8s.io/${form.version}`,
    metadata: object.metadata ?? {},
  };
}

/** The envelope of a PartialObjectMetadataList (its items are written beside it). */
export function partialObjectMetadataList(
  metadata: ListMeta,
  form: MetadataForm,
): { kind: "PartialObjectMetadataList"; apiVersion: string; metadata: ListMeta } {
  return { kind: "PartialObjectMetadataList", apiVersion: `meta.k8s.io/${form.version}`, metadata };
}

/** Upstream's 406 for a list asked of one object (`kind`), or one object asked of a list. */
export function metadataFormMismatch(form: MetadataForm, kind: string): StatusError {
  const message =
    form.kind === "PartialObjectMetadataList"
      ? `you requested PartialObjectMetadataList, but the requested object is not a list (${kind})`
      : `you requested PartialObjectMetadata, but the requested object is a list (${kind})`;
  return new StatusError({ code: 406, reason: "NotAcceptable", message });
}
