import type {
  CustomResourceDefinition,
  CustomResourceDefinitionCondition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionStatus,
} from "./definition-validation.js";

/**
 * The status the naming and establishing controllers give a CRD, as apiextensions-apiserver's
 * NamingConditionController and EstablishingController do on one server:
 *
 * - each requested name is checked against the *accepted* names of the other CRDs of the same group
 *   (plural, singular and short names against resource names; kind and listKind against kinds); a name
 *   that is already its accepted value, or unused, is accepted; the last failing check sets the reason
 *   (`PluralConflict`, `SingularConflict`, `ShortNamesConflict`, `KindConflict`, `ListKindConflict`);
 * - `NamesAccepted` is True (`NoConflicts`) or False; `Established` becomes True
 *   (`InitialNamesAccepted`) once names were accepted, and never goes back to False.
 *
 * `lastTransitionTime` changes only when a condition's status flips.
 */
export function acceptNames(
  crd: CustomResourceDefinition,
  others: readonly CustomResourceDefinition[],
  now: string,
): CustomResourceDefinitionStatus {
  const requested = crd.spec.names;
  const previous = crd.status?.acceptedNames ?? { plural: "", kind: "" };
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of others) {
    if (other.metadata?.name === crd.metadata?.name || other.spec?.group !== crd.spec.group) continue;
    const accepted = other.status?.acceptedNames;
    if (!accepted) continue;
    for (const n of [accepted.plural, accepted.singular, ...(accepted.shortNames ?? [])])
      if (n) resources.add(n);
    for (const k of [accepted.kind, accepted.listKind]) if (k) kinds.add(k);
  }
  const free = (value: string | undefined, current: string | undefined, used: Set<string>) =>
    value === undefined || value === current || !used.has(value);

  const accepted: CustomResourceDefinitionStatus["acceptedNames"] = { ...previous };
  let reason = "";
  let message = "";
  const conflict = (why: string, text: string) => {
    reason = why;
    message = text;
  };
  if (free(requested.plural, previous.plural, resources)) accepted.plural = requested.plural;
  else conflict("PluralConflict", `"${requested.plural}" is already in use`);
  if (free(requested.singular, previous.singular, resources))
    setName(accepted, "singular", requested.singular);
  else conflict("SingularConflict", `"${requested.singular}" is already in use`);
  const shortConflicts = (requested.shortNames ?? []).filter(
    (s) => !(previous.shortNames ?? []).includes(s) && resources.has(s),
  );
  if (shortConflicts.length === 0) setName(accepted, "shortNames", requested.shortNames);
  else {
    const texts = shortConflicts.map((s) => `"${s}" is already in use`);
    conflict("ShortNamesConflict", texts.length === 1 ? (texts[0] ?? "") : `[${texts.join(", ")}]`);
  }
  if (free(requested.kind, previous.kind, kinds)) accepted.kind = requested.kind;
  else conflict("KindConflict", `"${requested.kind}" is already in use`);
  if (free(requested.listKind, previous.listKind, kinds)) setName(accepted, "listKind", requested.listKind);
  else conflict("ListKindConflict", `"${requested.listKind}" is already in use`);
  setName(accepted, "categories", requested.categories);

  const conditions = [...(crd.status?.conditions ?? [])];
  const namesAccepted = reason === "";
  setCondition(
    conditions,
    namesAccepted
      ? { type: "NamesAccepted", status: "True", reason: "NoConflicts", message: "no conflicts found" }
      : { type: "NamesAccepted", status: "False", reason, message },
    now,
  );
  const established = conditions.find((c) => c.type === "Established")?.status === "True";
  if (!established) {
    setCondition(
      conditions,
      namesAccepted
        ? {
            type: "Established",
            status: "True",
            reason: "InitialNamesAccepted",
            message: "the initial names have been accepted",
          }
        : {
            type: "Established",
            status: "False",
            reason: "NotAccepted",
            message: "not all names are accepted",
          },
      now,
    );
  }
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  const storedVersions = [...(crd.status?.storedVersions ?? [])];
  if (storage && !storedVersions.includes(storage)) storedVersions.push(storage);
  return { conditions, acceptedNames: accepted, storedVersions };
}

/** Whether the CRD's kind may be served: names accepted or already established (the serving gate). */
export function isServable(crd: CustomResourceDefinition): boolean {
  return (crd.status?.conditions ?? []).some(
    (c) => (c.type === "NamesAccepted" || c.type === "Established") && c.status === "True",
  );
}

function setName<K extends keyof CustomResourceDefinitionNames>(
  names: Partial<CustomResourceDefinitionNames>,
  key: K,
  value: CustomResourceDefinitionNames[K] | undefined,
): void {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) delete names[key];
  else names[key] = value;
}

export function setCondition(
  conditions: CustomResourceDefinitionCondition[],
  next: Omit<CustomResourceDefinitionCondition, "lastTransitionTime">,
  now: string,
): void {
  const index = conditions.findIndex((c) => c.type === next.type);
  const current = conditions[index];
  if (!current) {
    conditions.push({ ...next, lastTransitionTime: now });
    return;
  }
  conditions[index] = {
    ...next,
    lastTransitionTime: current.status === next.status ? current.lastTransitionTime : now,
  };
}
