import { bool, i64, type MessageSchema, mapOf, msg, POINTER, REPEATED, str, time } from "./schema-fields.js";

/** Messages of k8s.io/apimachinery: the runtime envelope and meta/v1. */
export const metaMessages: Readonly<Record<string, MessageSchema>> = {
  // k8s.io/apimachinery/pkg/runtime
  Unknown: {
    1: msg("typeMeta", "RuntimeTypeMeta"),
    2: { name: "raw", type: { scalar: "bytes" } },
    3: str("contentEncoding"),
    4: str("contentType"),
  },
  RuntimeTypeMeta: { 1: str("apiVersion"), 2: str("kind") },

  // k8s.io/apimachinery/pkg/apis/meta/v1
  ObjectMeta: {
    1: str("name"),
    2: str("generateName"),
    3: str("namespace"),
    4: str("selfLink"),
    5: str("uid"),
    6: str("resourceVersion"),
    7: i64("generation"),
    8: time("creationTimestamp"),
    9: time("deletionTimestamp"),
    10: i64("deletionGracePeriodSeconds", POINTER),
    11: mapOf("labels", "string"),
    12: mapOf("annotations", "string"),
    13: msg("ownerReferences", "OwnerReference", REPEATED),
    14: str("finalizers", REPEATED),
  },
  OwnerReference: {
    5: str("apiVersion"),
    1: str("kind"),
    3: str("name"),
    4: str("uid"),
    6: bool("controller", POINTER),
    7: bool("blockOwnerDeletion", POINTER),
  },
  LabelSelector: {
    1: mapOf("matchLabels", "string"),
    2: msg("matchExpressions", "LabelSelectorRequirement", REPEATED),
  },
  LabelSelectorRequirement: { 1: str("key"), 2: str("operator"), 3: str("values", REPEATED) },
  Condition: {
    1: str("type"),
    2: str("status"),
    3: i64("observedGeneration"),
    4: time("lastTransitionTime"),
    5: str("reason"),
    6: str("message"),
  },
};
