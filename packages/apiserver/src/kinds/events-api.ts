import {
  events,
  eventsV1Events,
  isDNS1123Subdomain,
  isQualifiedName,
  type KubeObject,
  selectableFieldsOf,
} from "@reconcile/api";
import type { Event as EventsV1 } from "kubernetes-types/events/v1.js";
import { copyJson, jsonEqual } from "../json.js";
import type { FieldErrors } from "../registry/field-errors.js";
import type { VersionConversion } from "../registry/resource-definition.js";
import { defineKind } from "./definition.js";
import { eventPrinter, type Printer } from "./printers/index.js";

// events.k8s.io/v1 Events: the same objects as core v1 Events, stored once
// and served in both groups, as kube-apiserver serves them, with the newer
// API's names (`regarding`, `note`, `reportingController`, the `deprecated*`
// fields) and its stricter checks on writes through it.

type Served = EventsV1 & KubeObject;

/** Fields that differ only in name: events.k8s.io/v1's, then core v1's. */
const renamed = [
  ["reportingController", "reportingComponent"],
  ["regarding", "involvedObject"],
  ["note", "message"],
  ["deprecatedSource", "source"],
  ["deprecatedFirstTimestamp", "firstTimestamp"],
  ["deprecatedLastTimestamp", "lastTimestamp"],
  ["deprecatedCount", "count"],
] as const;

function rename(object: KubeObject, from: 0 | 1, apiVersion: string): KubeObject {
  const copy = copyJson(object) as unknown as Record<string, unknown>;
  copy.apiVersion = apiVersion;
  for (const [newer, core] of renamed) {
    const [source, target] = from === 0 ? [newer, core] : [core, newer];
    const value = copy[source];
    delete copy[source];
    // A null is kept: both types write a zero time as null (`firstTimestamp: null`).
    if (value !== undefined) copy[target] = value;
  }
  return copy as unknown as KubeObject;
}

/** core v1 ↔ events.k8s.io/v1 (`Convert_v1_Event_To_core_Event` and back). */
export const eventsConversion: VersionConversion = {
  toStorage(object) {
    const stored = rename(object, 0, "v1") as KubeObject & Record<string, unknown>;
    if (stored.eventTime === null) delete stored.eventTime;
    // The core type writes these two even when empty.
    stored.reportingComponent ??= "";
    stored.reportingInstance ??= "";
    return stored;
  },
  fromStorage(object) {
    const served = rename(object, 1, "events.k8s.io/v1") as Served & Record<string, unknown>;
    // What Go's encoding/json writes for this struct: empty strings left out (every one is
    // `omitempty`), zero structs and times written.
    for (const field of ["reportingController", "reportingInstance", "action", "reason", "note", "type"])
      if (served[field] === "") delete served[field];
    served.eventTime ??= null as never;
    served.regarding ??= {};
    served.deprecatedSource ??= {};
    served.deprecatedFirstTimestamp ??= null as never;
    served.deprecatedLastTimestamp ??= null as never;
    return served;
  },
};

const lengthLimits = { reportingInstance: 128, action: 128, reason: 128 } as const;
const noteLimit = 1024;

/** `legacyValidateEvent` (every write, through either API) with this API's names where it uses them. */
function validateLegacy(event: Served, errors: FieldErrors): void {
  const namespace = event.metadata?.namespace ?? "";
  const regardingNamespace = event.regarding?.namespace ?? "";
  if (!event.eventTime) {
    if (
      regardingNamespace === ""
        ? namespace !== "" && namespace !== "default"
        : namespace !== regardingNamespace
    )
      errors.invalid("involvedObject.namespace", regardingNamespace, "does not match event.namespace");
  } else {
    if (regardingNamespace === "" && namespace !== "default" && namespace !== "kube-system")
      errors.invalid("involvedObject.namespace", regardingNamespace, "does not match event.namespace");
    const controller = event.reportingController ?? "";
    if (controller === "") errors.required("reportingController", "");
    for (const problem of isQualifiedName(controller))
      errors.invalid("reportingController", controller, problem);
    for (const field of ["reportingInstance", "action", "reason"] as const) {
      const value = event[field] ?? "";
      if (value === "") errors.required(field, "");
      if (value.length > lengthLimits[field])
        errors.invalid(field, "", `can have at most ${lengthLimits[field]} characters`);
    }
    if ((event.note ?? "").length > noteLimit)
      errors.invalid("message", "", `can have at most ${noteLimit} characters`);
  }
  for (const problem of isDNS1123Subdomain(namespace)) errors.invalid("namespace", namespace, problem);
}

/** `validateV1EventSeries`. */
function validateSeries(event: Served, errors: FieldErrors): void {
  const series = event.series;
  if (series == null) return;
  if ((series.count ?? 0) < 2) errors.invalid("series.count", "", "should be at least 2");
  if (!series.lastObservedTime) errors.required("series.lastObservedTime", "");
}

/** `ValidateEventCreate` for events.k8s.io/v1 beyond the legacy checks (`validate`): the strict ones. */
function validateEvent(object: KubeObject, errors: FieldErrors): void {
  const event = object as Served;
  validateSeries(event, errors);
  if (!event.eventTime) errors.required("eventTime", "");
  if (event.type !== "Normal" && event.type !== "Warning")
    errors.invalid("type", "", `has invalid value: ${event.type ?? ""}`);
  if (event.deprecatedFirstTimestamp) errors.invalid("deprecatedFirstTimestamp", "", "needs to be unset");
  if (event.deprecatedLastTimestamp) errors.invalid("deprecatedLastTimestamp", "", "needs to be unset");
  if (event.deprecatedCount) errors.invalid("deprecatedCount", "", "needs to be unset");
  if (event.deprecatedSource?.component || event.deprecatedSource?.host)
    errors.invalid("deprecatedSource", "", "needs to be unset");
}

/** The fields an update through events.k8s.io/v1 may not change, by the paths upstream names them with. */
const immutable = [
  ["regarding", "involvedObject"],
  ["reason", "reason"],
  ["note", "message"],
  ["deprecatedSource", "source"],
  ["deprecatedFirstTimestamp", "firstTimestamp"],
  ["deprecatedLastTimestamp", "lastTimestamp"],
  ["deprecatedCount", "count"],
  ["type", "type"],
  ["eventTime", "eventTime"],
  ["action", "action"],
  ["related", "related"],
  ["reportingController", "reportingController"],
  ["reportingInstance", "reportingInstance"],
] as const;

/** `ValidateEventUpdate` for events.k8s.io/v1: the legacy checks on the new event; only the series may change. */
function validateEventUpdate(object: KubeObject, old: KubeObject, errors: FieldErrors): void {
  const event = object as Served & Record<string, unknown>;
  const before = old as Served & Record<string, unknown>;
  if (!jsonEqual(event.series ?? null, before.series ?? null)) validateSeries(event, errors);
  for (const [field, path] of immutable) {
    const value = event[field] ?? null;
    if (!jsonEqual(value, before[field] ?? null)) errors.invalid(path, value, "field is immutable");
  }
}

/** The core Event table, as upstream prints both APIs' Events from the one internal type. */
const eventsPrinter: Printer = {
  columns: eventPrinter.columns,
  cells: (object, now) => eventPrinter.cells(rename(object, 0, "v1"), now),
};

export const eventsV1EventDefinition = defineKind({
  descriptor: eventsV1Events,
  strategy: {
    validate: (object, errors) => validateLegacy(object as Served, errors),
    validateCreate: validateEvent,
    validateUpdate: validateEventUpdate,
  },
  printer: eventsPrinter,
  selectableFields: selectableFieldsOf(eventsV1Events),
  storedAs: events,
  conversion: eventsConversion,
  // The same storage and strategy as core Events: a PUT may create one.
  allowsCreateOnUpdate: true,
});
