import type { Event as EventsV1Event } from "kubernetes-types/events/v1.js";
import { newBadRequest, type StatusError } from "./errors.js";
import type { ResourceDescriptor } from "./resources.js";
import { SelectorParseError } from "./selector-errors.js";
import type { DeepReadonly, Event, KubeObject, Namespace, Node, Pod, ReplicaSet, Secret } from "./types.js";

/** One term of a field selector. `==` parses to `=`. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: "=" | "!=";
  /** The unescaped value. */
  readonly value: string;
}

/** A parsed field selector (apimachinery's `fields.Selector`). */
export interface FieldSelector {
  /**
   * Whether an object with these fields is selected. A field missing from
   * `fields` has the value "", as upstream's `fields.Set.Get`.
   */
  matches(fields: Readonly<Record<string, string>>): boolean;
  /** True for the selector without terms, which selects everything. */
  empty(): boolean;
  /** The canonical string: terms sorted, values escaped. */
  toString(): string;
  requirements(): readonly FieldRequirement[];
  /** The value `field` must equal (`field=v`), if the selector pins it; undefined otherwise. */
  requiresExactMatch(field: string): string | undefined;
}

/**
 * Parses the `?fieldSelector=` syntax: `field=value`, `field==value`,
 * `field!=value`, comma-joined; `\,`, `\=` and `\\` escape those characters
 * in values (apimachinery's `fields.ParseSelector`). "" selects everything.
 * Throws a {@link SelectorParseError} naming the term and its position.
 */
export function parseFieldSelector(text: string): FieldSelector {
  if (typeof text !== "string") throw new TypeError(`a field selector must be a string, got ${typeof text}`);
  const requirements: FieldRequirement[] = [];
  for (const { term, position } of splitTerms(text)) {
    if (term === "") continue;
    const split = splitTerm(term);
    if (split === undefined) {
      throw new SelectorParseError("field", text, term, position, `can't understand '${term}'`);
    }
    const value = unescapeFieldValue(split.value, (reason, offset) => {
      throw new SelectorParseError("field", text, term, position + split.valueOffset + offset, reason);
    });
    requirements.push(Object.freeze({ field: split.field, operator: split.operator, value }));
  }
  return new TermsSelector(requirements);
}

/** A field selector requiring `field=value` for each entry; no entries select everything. */
export function fieldSelectorFromSet(fields: Readonly<Record<string, string>>): FieldSelector {
  return new TermsSelector(
    Object.keys(fields).map((field) =>
      Object.freeze({ field, operator: "=" as const, value: fields[field]! }),
    ),
  );
}

/** Escapes `\`, `,` and `=` for use as a field selector value (`fields.EscapeValue`). */
export function escapeFieldValue(value: string): string {
  let escaped = "";
  for (const c of value) escaped += c === "\\" || c === "," || c === "=" ? `\\${c}` : c;
  return escaped;
}

/**
 * The fields an object can be selected by, as kube-apiserver computes them
 * (each kind's `ToSelectableFields`): `metadata.name`, `metadata.namespace` for
 * namespaced kinds, and the kind's own fields. Missing values are "".
 */
export function objectFieldSet(
  resource: Pick<ResourceDescriptor, "group" | "kind" | "namespaced">,
  obj: KubeObject | DeepReadonly<KubeObject>,
  kindFields: SelectableFields | undefined = selectableFieldsOf(resource),
): Record<string, string> {
  const fields: Record<string, string> = { "metadata.name": obj.metadata?.name ?? "" };
  if (resource.namespaced) fields["metadata.namespace"] = obj.metadata?.namespace ?? "";
  if (kindFields) Object.assign(fields, kindFields.fields(obj as never));
  return fields;
}

/** The selectable fields of a built-in kind, or undefined for a kind with metadata fields only. */
export function selectableFieldsOf(
  resource: Pick<ResourceDescriptor, "group" | "kind">,
): SelectableFields | undefined {
  return kindFieldSets[`${resource.group}/${resource.kind}`];
}

/** The field labels a kind can be selected by. */
export function supportedFieldLabels(
  resource: Pick<ResourceDescriptor, "group" | "kind" | "namespaced">,
): readonly string[] {
  const kindFields = kindFieldSets[`${resource.group}/${resource.kind}`];
  return kindFields ? kindFields.labels : defaultLabels;
}

/**
 * Rejects a selector that uses a field label the kind does not support, with
 * the 400 Bad Request kube-apiserver answers (`field label not supported: x`).
 */
export function validateFieldSelector(
  resource: Pick<ResourceDescriptor, "group" | "kind" | "namespaced">,
  selector: FieldSelector,
): void {
  const error = fieldSelectorError(resource, selector);
  if (error) throw error;
}

/** Like {@link validateFieldSelector}, but returns the error (or undefined) instead of throwing. */
export function fieldSelectorError(
  resource: Pick<ResourceDescriptor, "group" | "kind" | "namespaced">,
  selector: FieldSelector,
  kindFields: SelectableFields | undefined = selectableFieldsOf(resource),
): StatusError | undefined {
  const supported = kindFields ? kindFields.labels : defaultLabels;
  for (const { field } of selector.requirements()) {
    if (supported.includes(field)) continue;
    // Kinds without their own field list get kube-apiserver's default conversion message.
    return newBadRequest(
      kindFields
        ? `field label not supported: ${field}`
        : `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
    );
  }
  return undefined;
}

// ---------------------------------------------------------------------------

class TermsSelector implements FieldSelector {
  readonly #requirements: readonly FieldRequirement[];
  readonly #fields: string[];
  readonly #negated: boolean[];
  readonly #values: string[];

  constructor(requirements: FieldRequirement[]) {
    // Sorted by their string form, as upstream sorts the terms before parsing them.
    const keyed = requirements.map((r) => ({ r, text: termToString(r) }));
    keyed.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
    this.#requirements = Object.freeze(keyed.map((k) => k.r));
    this.#fields = this.#requirements.map((r) => r.field);
    this.#negated = this.#requirements.map((r) => r.operator === "!=");
    this.#values = this.#requirements.map((r) => r.value);
  }

  matches(fields: Readonly<Record<string, string>>): boolean {
    const names = this.#fields;
    for (let i = 0; i < names.length; i++) {
      const raw = fields[names[i]!];
      const value = typeof raw === "string" ? raw : "";
      if ((value === this.#values[i]) === this.#negated[i]) return false;
    }
    return true;
  }

  empty(): boolean {
    return this.#requirements.length === 0;
  }

  toString(): string {
    return this.#requirements.map(termToString).join(",");
  }

  requirements(): readonly FieldRequirement[] {
    return this.#requirements;
  }

  requiresExactMatch(field: string): string | undefined {
    for (const r of this.#requirements) if (r.field === field && r.operator === "=") return r.value;
    return undefined;
  }
}

function termToString(r: FieldRequirement): string {
  return `${r.field}${r.operator}${escapeFieldValue(r.value)}`;
}

/** Splits on commas not escaped by a backslash; escapes stay in the terms. */
function splitTerms(text: string): { term: string; position: number }[] {
  if (text === "") return [];
  const terms: { term: string; position: number }[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (escaped) escaped = false;
    else if (c === "\\") escaped = true;
    else if (c === ",") {
      terms.push({ term: text.slice(start, i), position: start });
      start = i + 1;
    }
  }
  terms.push({ term: text.slice(start), position: start });
  return terms;
}

/** The first operator in the term splits it; `!=` and `==` are tried before `=` at each position. */
function splitTerm(
  term: string,
): { field: string; operator: "=" | "!="; value: string; valueOffset: number } | undefined {
  for (let i = 0; i < term.length; i++) {
    if (term.startsWith("!=", i))
      return { field: term.slice(0, i), operator: "!=", value: term.slice(i + 2), valueOffset: i + 2 };
    if (term.startsWith("==", i))
      return { field: term.slice(0, i), operator: "=", value: term.slice(i + 2), valueOffset: i + 2 };
    if (term[i] === "=")
      return { field: term.slice(0, i), operator: "=", value: term.slice(i + 1), valueOffset: i + 1 };
  }
  return undefined;
}

function unescapeFieldValue(value: string, fail: (reason: string, offset: number) => never): string {
  if (!/[\\,=]/.test(value)) return value;
  let result = "";
  let escaped = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (escaped) {
      if (c !== "\\" && c !== "," && c !== "=") fail(`invalid escape sequence: \\${c}`, i - 1);
      result += c;
      escaped = false;
    } else if (c === "\\") escaped = true;
    else if (c === "," || c === "=") fail(`unescaped character in value: '${c}'`, i);
    else result += c;
  }
  if (escaped) fail("invalid escape sequence: \\", value.length - 1);
  return result;
}

// ---------------------------------------------------------------------------
// Per-kind selectable fields, as each kind's registry strategy defines them.

/** A kind's selectable fields (its `ToSelectableFields`): the labels, and their values for one object. */
export interface SelectableFields {
  /** Every label a field selector may name, metadata's included. */
  readonly labels: readonly string[];
  fields(obj: never): Record<string, string>;
}

const defaultLabels: readonly string[] = Object.freeze(["metadata.name", "metadata.namespace"]);

function kindFields<T>(
  metadataLabels: readonly string[],
  fields: (obj: DeepReadonly<T>) => Record<string, string>,
  labels: readonly string[],
): SelectableFields {
  return {
    labels: Object.freeze([...metadataLabels, ...labels]),
    fields: fields as (obj: never) => Record<string, string>,
  };
}

const namespacedMeta = ["metadata.name", "metadata.namespace"];
const clusterMeta = ["metadata.name"];

/** The field labels of Events, in either API. */
const eventFieldLabels = [
  "involvedObject.kind",
  "involvedObject.namespace",
  "involvedObject.name",
  "involvedObject.uid",
  "involvedObject.apiVersion",
  "involvedObject.resourceVersion",
  "involvedObject.fieldPath",
  "reason",
  "reportingComponent",
  "source",
  "type",
];

/** An Event's field set from the parts both APIs have under different names. */
function eventFields(
  involved: DeepReadonly<Event["involvedObject"]> | undefined,
  reporting: string | undefined,
  sourceComponent: string | undefined,
  event: { readonly reason?: string | undefined; readonly type?: string | undefined },
): Record<string, string> {
  return {
    "involvedObject.kind": involved?.kind ?? "",
    "involvedObject.namespace": involved?.namespace ?? "",
    "involvedObject.name": involved?.name ?? "",
    "involvedObject.uid": involved?.uid ?? "",
    "involvedObject.apiVersion": involved?.apiVersion ?? "",
    "involvedObject.resourceVersion": involved?.resourceVersion ?? "",
    "involvedObject.fieldPath": involved?.fieldPath ?? "",
    reason: event.reason ?? "",
    reportingComponent: reporting ?? "",
    source: sourceComponent || reporting || "",
    type: event.type ?? "",
  };
}

const coreEventFields = (event: DeepReadonly<Event>) =>
  eventFields(event.involvedObject, event.reportingComponent, event.source?.component, event);

const newerEventFields = (event: DeepReadonly<EventsV1Event>) =>
  eventFields(event.regarding, event.reportingController, event.deprecatedSource?.component, event);

const kindFieldSets: Record<string, SelectableFields | undefined> = {
  "/Pod": kindFields<Pod>(
    namespacedMeta,
    (pod) => ({
      "spec.nodeName": pod.spec?.nodeName ?? "",
      "spec.restartPolicy": pod.spec?.restartPolicy ?? "",
      "spec.schedulerName": pod.spec?.schedulerName ?? "",
      "spec.serviceAccountName": pod.spec?.serviceAccountName ?? "",
      "spec.hostNetwork": String(pod.spec?.hostNetwork ?? false),
      "status.phase": pod.status?.phase ?? "",
      "status.podIP": pod.status?.podIPs?.[0]?.ip ?? pod.status?.podIP ?? "",
      "status.nominatedNodeName": pod.status?.nominatedNodeName ?? "",
    }),
    [
      "spec.nodeName",
      "spec.restartPolicy",
      "spec.schedulerName",
      "spec.serviceAccountName",
      "spec.hostNetwork",
      "status.phase",
      "status.podIP",
      "status.nominatedNodeName",
    ],
  ),
  "/Event": kindFields<Event>(namespacedMeta, coreEventFields, eventFieldLabels),
  "/Node": kindFields<Node>(
    clusterMeta,
    (node) => ({ "spec.unschedulable": String(node.spec?.unschedulable ?? false) }),
    ["spec.unschedulable"],
  ),
  "/Secret": kindFields<Secret>(namespacedMeta, (secret) => ({ type: secret.type ?? "" }), ["type"]),
  "/Namespace": kindFields<Namespace>(clusterMeta, (ns) => ({ "status.phase": ns.status?.phase ?? "" }), [
    "status.phase",
  ]),
  // The same field labels as core Events (upstream selects on the internal type both share),
  // read from either shape: a list's filter may see the stored core object.
  "events.k8s.io/Event": kindFields<EventsV1Event | Event>(
    namespacedMeta,
    (event) =>
      event.apiVersion === "v1"
        ? coreEventFields(event as DeepReadonly<Event>)
        : newerEventFields(event as DeepReadonly<EventsV1Event>),
    eventFieldLabels,
  ),
  "certificates.k8s.io/CertificateSigningRequest": kindFields<{ spec?: { signerName?: string } }>(
    clusterMeta,
    (csr) => ({ "spec.signerName": csr.spec?.signerName ?? "" }),
    ["spec.signerName"],
  ),
  "apps/ReplicaSet": kindFields<ReplicaSet>(
    namespacedMeta,
    (rs) => ({ "status.replicas": String(rs.status?.replicas ?? 0) }),
    ["status.replicas"],
  ),
};
