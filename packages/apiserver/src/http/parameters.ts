import { type KubeObject, type ListOptions, newBadRequest, newInvalid } from "@reconcile/api";
import { isJsonObject } from "../json.js";
import type { AdmissionUser } from "../registry/admission.js";
import { FieldErrors } from "../registry/field-errors.js";
import type { RegistryDeleteOptions } from "../registry/registry.js";
import { parseJson } from "./request-body.js";
import { parseIncludeObject } from "./table.js";

/** What every write passes on to the registry: dry run, and whom managedFields credit. */
export interface WriteOptions {
  dryRun: "All" | undefined;
  /** `fieldManager`; else the registry derives one from the User-Agent's product. */
  fieldManager: string | undefined;
  userAgent: string | undefined;
  /** The request's own admission check (RBAC's escalation check). */
  admit?: ((object: KubeObject, existing: KubeObject | undefined) => Promise<void> | void) | undefined;
  /** Who writes, for the admission chain. */
  user?: AdmissionUser | undefined;
  /** Whether the writer may create the object a PUT or apply turns into a create of. */
  mayCreate?: (() => Promise<void>) | undefined;
  /** Where admission's warnings are collected for the `Warning` headers. */
  warnings?: string[] | undefined;
  /** Where admission's audit annotations go (the request's audit event); none when it is not audited. */
  annotate?:
    | ((key: string, value: string, level?: "Metadata" | "Request" | "RequestResponse") => void)
    | undefined;
}

/** A list's options from its query: selectors, paging and resourceVersion semantics. */
export function listOptions(query: URLSearchParams): ListOptions {
  const limit = query.get("limit");
  const match = query.get("resourceVersionMatch");
  if (match !== null && match !== "" && match !== "NotOlderThan" && match !== "Exact") {
    throw newBadRequest(
      `resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
    );
  }
  return {
    labelSelector: query.get("labelSelector") ?? undefined,
    fieldSelector: query.get("fieldSelector") ?? undefined,
    limit: limit === null || limit === "" ? undefined : parseNumber("limit", limit),
    continue: query.get("continue") ?? undefined,
    resourceVersion: query.get("resourceVersion") ?? undefined,
    resourceVersionMatch: match === null || match === "" ? undefined : match,
  };
}

/**
 * A delete's options from its DeleteOptions body, else its query (grace
 * period, propagation or the older `orphanDependents`, preconditions, dry run).
 */
export function deleteOptions(body: Buffer, query: URLSearchParams): RegistryDeleteOptions {
  const options: RegistryDeleteOptions = {};
  const fromBody = body.length === 0 ? {} : parseJson(body);
  if (!isJsonObject(fromBody)) throw newBadRequest("the DeleteOptions body must be a JSON object");
  const grace = fromBody.gracePeriodSeconds ?? query.get("gracePeriodSeconds") ?? undefined;
  if (grace !== undefined) {
    const seconds = typeof grace === "number" ? grace : parseNumber("gracePeriodSeconds", String(grace));
    options.gracePeriodSeconds = seconds;
  }
  const policy = fromBody.propagationPolicy ?? query.get("propagationPolicy") ?? undefined;
  if (policy !== undefined) {
    if (typeof policy !== "string") throw newBadRequest("propagationPolicy must be a string");
    options.propagationPolicy = policy;
  } else {
    const orphan = fromBody.orphanDependents ?? query.get("orphanDependents") ?? undefined;
    if (orphan !== undefined) {
      options.orphanDependents = typeof orphan === "string" ? isTrue(orphan) : orphan === true;
      options.propagationPolicy = options.orphanDependents ? "Orphan" : "Background";
    }
  }
  const preconditions = fromBody.preconditions;
  if (preconditions !== undefined && preconditions !== null) {
    if (!isJsonObject(preconditions)) throw newBadRequest("preconditions must be an object");
    const { uid, resourceVersion } = preconditions;
    if (
      (uid !== undefined && typeof uid !== "string") ||
      (resourceVersion !== undefined && typeof resourceVersion !== "string")
    ) {
      throw newBadRequest("preconditions.uid and preconditions.resourceVersion must be strings");
    }
    options.preconditions = {
      ...(uid !== undefined ? { uid } : {}),
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
    };
  }
  const dryRun = fromBody.dryRun;
  if (Array.isArray(dryRun) && dryRun.includes("All")) options.dryRun = "All";
  else if (parseDryRun(query) === "All") options.dryRun = "All";
  return options;
}

/** `includeObject` of a Table request, a 400 when it names no policy. */
export function parseIncludeObjectParam(query: URLSearchParams) {
  try {
    return parseIncludeObject(query.get("includeObject"));
  } catch (error) {
    throw newBadRequest((error as Error).message);
  }
}

/** `dryRun`: absent, or `All` in every value. */
export function parseDryRun(query: URLSearchParams): "All" | undefined {
  const values = query.getAll("dryRun");
  if (values.length === 0) return undefined;
  for (const value of values) {
    if (value !== "All")
      throw newBadRequest(`dryRun: Unsupported value: "${value}": supported values: "All"`);
  }
  return "All";
}

export function parseNumber(name: string, value: string): number {
  if (!/^-?[0-9]+$/.test(value))
    throw newBadRequest(`${name}: Invalid value: "${value}": must be an integer`);
  return Number(value);
}

/**
 * A boolean query parameter as apimachinery reads one
 * (`Convert_Slice_string_To_bool`): absent is false; `0` and `false` in any
 * case are false; any other value, the empty one included, is true. So
 * `watch=True` (what the Python client sends) is a watch, and `follow=False`
 * is no follow.
 */
export function isTrue(value: string | null): boolean {
  if (value === null) return false;
  return !(value === "0" || value.toLowerCase() === "false");
}

/**
 * kube-apiserver's `validateWatchOptions` with the WatchList feature on:
 * `sendInitialEvents` wants `resourceVersionMatch=NotOlderThan`, which a
 * watch takes only with it. The watch's own options, or the 422 upstream
 * words (`ListOptions.meta.k8s.io "" is invalid: …`).
 */
export function watchListOptions(query: URLSearchParams): {
  sendInitialEvents: boolean | undefined;
  resourceVersionMatch: "NotOlderThan" | undefined;
} {
  const errors = new FieldErrors();
  const send = query.get("sendInitialEvents");
  const sendInitialEvents = send === null ? undefined : isTrue(send);
  const match = query.get("resourceVersionMatch") ?? "";
  if (sendInitialEvents !== undefined && match !== "NotOlderThan") {
    errors.forbidden(
      "resourceVersionMatch",
      "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
    );
  }
  if (match !== "") {
    if (sendInitialEvents === undefined) {
      errors.forbidden(
        "resourceVersionMatch",
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
      );
    }
    if (match !== "NotOlderThan") errors.notSupported("resourceVersionMatch", match, ["NotOlderThan"]);
    if ((query.get("continue") ?? "") !== "") {
      errors.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided");
    }
  }
  if (!errors.empty) throw newInvalid({ group: "meta.k8s.io", kind: "ListOptions" }, "", errors.list);
  return { sendInitialEvents, resourceVersionMatch: match === "NotOlderThan" ? match : undefined };
}

/** A list may not ask for initial events (upstream's `ValidateListOptions`). */
export function validateListQuery(query: URLSearchParams): void {
  if (!query.has("sendInitialEvents")) return;
  const errors = new FieldErrors();
  errors.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list");
  throw newInvalid({ group: "meta.k8s.io", kind: "ListOptions" }, "", errors.list);
}

/** kube-apiserver's `ValidateFieldManager` and `ValidateDryRun` for create and update. */
export function validateWriteOptions(kind: "CreateOptions" | "UpdateOptions", query: URLSearchParams): void {
  const errors = new FieldErrors();
  validateFieldManager(query.get("fieldManager") ?? "", errors);
  if (!errors.empty) throw newInvalid({ group: "meta.k8s.io", kind }, "", errors.list);
}

/**
 * kube-apiserver's `ValidatePatchOptions`: an apply names its field manager;
 * only an apply may force.
 */
export function validatePatchOptions(contentType: string | undefined, query: URLSearchParams): void {
  const errors = new FieldErrors();
  const apply = /^application\/apply-patch\+(yaml|json)\b/i.test(contentType?.trim() ?? "");
  const fieldManager = query.get("fieldManager") ?? "";
  if (!apply && query.has("force")) errors.forbidden("force", "may not be specified for non-apply patch");
  if (apply && fieldManager === "") errors.required("fieldManager", "is required for apply patch");
  validateFieldManager(fieldManager, errors);
  if (!errors.empty) throw newInvalid({ group: "meta.k8s.io", kind: "PatchOptions" }, "", errors.list);
}

const fieldManagerMaxLength = 128;

function validateFieldManager(fieldManager: string, errors: FieldErrors): void {
  if (Buffer.byteLength(fieldManager) > fieldManagerMaxLength)
    errors.tooLong("fieldManager", fieldManagerMaxLength);
  // Go's unicode.IsPrint: no control, format, private-use or unassigned characters, no separator but the space.
  let position = 0;
  for (const character of fieldManager) {
    if (character !== " " && /[\p{C}\p{Z}]/u.test(character)) {
      const code = character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      errors.invalid("fieldManager", fieldManager, `invalid character U+${code} (at position ${position})`);
    }
    position += Buffer.byteLength(character);
  }
}

/** What admission takes from a write that carries no body of the kind's: who asks, and where its warnings and audit annotations go. */
export function admissionOptions(write: WriteOptions): Pick<WriteOptions, "user" | "warnings" | "annotate"> {
  return { user: write.user, warnings: write.warnings, annotate: write.annotate };
}
