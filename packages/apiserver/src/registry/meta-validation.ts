import type { KubeObject, OwnerReference } from "@reconcile/api";
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from "@reconcile/api";
import type { FieldErrors } from "./field-errors.js";

/** How a kind's names are checked: most kinds take a DNS-1123 subdomain, namespaces a label. */
export type NameRule = (name: string) => string[];

export const dnsSubdomainName: NameRule = isDNS1123Subdomain;
export const dnsLabelName: NameRule = isDNS1123Label;

/** The longest total size of an object's annotations (`TotalAnnotationSizeLimitB`). */
const totalAnnotationSizeLimit = 256 * 1024;

/** apimachinery's `IsValidPathSegmentName`: why a name cannot be one segment of a path (none: it can). */
export function pathSegmentProblems(name: string): string[] {
  if (name === "." || name === "..") return [`may not be '${name}'`];
  const problems: string[] = [];
  if (name.includes("/")) problems.push("may not contain '/'");
  if (name.includes("%")) problems.push("may not contain '%'");
  return problems;
}

/** `ValidateObjectMeta`: name, labels, annotations, owner references, finalizers. */
export function validateObjectMeta(
  object: KubeObject,
  nameRule: NameRule,
  namespaced: boolean,
  errors: FieldErrors,
): void {
  const meta = object.metadata ?? {};
  const name = meta.name ?? "";
  if (name === "") errors.required("metadata.name", "name or generateName is required");
  else for (const problem of nameRule(name)) errors.invalid("metadata.name", name, problem);
  if (namespaced) {
    if (!meta.namespace) errors.required("metadata.namespace");
    else
      for (const problem of isDNS1123Label(meta.namespace))
        errors.invalid("metadata.namespace", meta.namespace, problem);
  } else if (meta.namespace) {
    errors.forbidden("metadata.namespace", "not allowed on this type");
  }
  validateLabels(meta.labels, "metadata.labels", errors);
  let annotationBytes = 0;
  const annotations = meta.annotations ?? {};
  for (const key in annotations) {
    const value = annotations[key]!;
    for (const problem of isQualifiedName(key.toLowerCase()))
      errors.invalid("metadata.annotations", key, problem);
    annotationBytes += key.length + value.length;
  }
  if (annotationBytes > totalAnnotationSizeLimit) {
    errors.list.push({
      type: "FieldValueTooLong",
      field: "metadata.annotations",
      message: `metadata.annotations: Too long: must have at most ${totalAnnotationSizeLimit} bytes`,
    });
  }
  validateOwnerReferences(meta.ownerReferences ?? [], errors);
  (meta.finalizers ?? []).forEach((finalizer, i) => {
    for (const problem of isQualifiedName(finalizer))
      errors.invalid(`metadata.finalizers[${i}]`, finalizer, problem);
  });
  if (meta.generation !== undefined && meta.generation < 0)
    errors.invalid("metadata.generation", meta.generation, "must be greater than or equal to 0");
}

export function validateLabels(
  labels: Record<string, string> | undefined,
  field: string,
  errors: FieldErrors,
): void {
  if (labels === undefined) return;
  for (const key in labels) {
    const value = labels[key]!;
    for (const problem of isQualifiedName(key)) errors.invalid(field, key, problem);
    for (const problem of isValidLabelValue(value)) errors.invalid(field, value, problem);
  }
}

/**
 * upstream's `ValidateLabelSelector`: matchLabels as labels, and each
 * expression's operator one of the four (values for In and NotIn, none for
 * Exists and DoesNotExist), its key a label name and its values label values.
 */
export function validateLabelSelector(
  selector: {
    matchLabels?: Record<string, string> | undefined;
    matchExpressions?:
      | readonly { key: string; operator: string; values?: readonly string[] | undefined }[]
      | undefined;
  },
  field: string,
  errors: FieldErrors,
): void {
  validateLabels(selector.matchLabels, `${field}.matchLabels`, errors);
  (selector.matchExpressions ?? []).forEach((expression, i) => {
    const at = `${field}.matchExpressions[${i}]`;
    const values = expression.values ?? [];
    if (expression.operator === "In" || expression.operator === "NotIn") {
      if (values.length === 0)
        errors.required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'");
    } else if (expression.operator === "Exists" || expression.operator === "DoesNotExist") {
      if (values.length > 0)
        errors.forbidden(
          `${at}.values`,
          "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        );
    } else errors.invalid(`${at}.operator`, expression.operator, "not a valid selector operator");
    for (const problem of isQualifiedName(expression.key ?? ""))
      errors.invalid(`${at}.key`, expression.key, problem);
    values.forEach((value, j) => {
      for (const problem of isValidLabelValue(value)) errors.invalid(`${at}.values[${j}]`, value, problem);
    });
  });
}

function validateOwnerReferences(refs: OwnerReference[], errors: FieldErrors): void {
  const controllers: string[] = [];
  refs.forEach((ref, i) => {
    const field = `metadata.ownerReferences[${i}]`;
    if (!ref.apiVersion)
      errors.invalid(`${field}.apiVersion`, ref.apiVersion ?? "", "version must not be empty");
    if (!ref.kind) errors.invalid(`${field}.kind`, ref.kind ?? "", "kind must not be empty");
    if (!ref.name) errors.invalid(`${field}.name`, ref.name ?? "", "name must not be empty");
    if (!ref.uid) errors.invalid(`${field}.uid`, ref.uid ?? "", "uid must not be empty");
    if (ref.controller) controllers.push(ref.name);
  });
  if (controllers.length > 1) {
    errors.invalid(
      "metadata.ownerReferences",
      refs,
      `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(" and ")}`,
    );
  }
}
