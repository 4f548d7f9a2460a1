import { i64, type MessageSchema, msg, POINTER, REPEATED, str } from "./schema-fields.js";

/**
 * Messages of the reviews and token requests kubectl sends as protobuf
 * (`auth can-i`, `auth can-i --list`, `auth whoami`, `create token`), from
 * k8s.io/api's authorization/v1 and authentication/v1 `generated.proto`.
 * SubjectAccessReview's `extra` (a map of messages) is not decoded from
 * protobuf; JSON carries it.
 */
export const authMessages: Readonly<Record<string, MessageSchema>> = {
  // authorization/v1
  SelfSubjectAccessReview: {
    1: msg("metadata", "ObjectMeta"),
    2: msg("spec", "SelfSubjectAccessReviewSpec"),
  },
  SelfSubjectAccessReviewSpec: {
    1: msg("resourceAttributes", "ResourceAttributes"),
    2: msg("nonResourceAttributes", "NonResourceAttributes"),
  },
  SubjectAccessReview: { 1: msg("metadata", "ObjectMeta"), 2: msg("spec", "SubjectAccessReviewSpec") },
  SubjectAccessReviewSpec: {
    1: msg("resourceAttributes", "ResourceAttributes"),
    2: msg("nonResourceAttributes", "NonResourceAttributes"),
    3: str("user"),
    4: str("groups", REPEATED),
    6: str("uid"),
  },
  ResourceAttributes: {
    1: str("namespace"),
    2: str("verb"),
    3: str("group"),
    4: str("version"),
    5: str("resource"),
    6: str("subresource"),
    7: str("name"),
  },
  NonResourceAttributes: { 1: str("path"), 2: str("verb") },
  SelfSubjectRulesReview: { 1: msg("metadata", "ObjectMeta"), 2: msg("spec", "SelfSubjectRulesReviewSpec") },
  SelfSubjectRulesReviewSpec: { 1: str("namespace") },
  // authentication/v1
  SelfSubjectReview: { 1: msg("metadata", "ObjectMeta") },
  TokenReview: { 1: msg("metadata", "ObjectMeta"), 2: msg("spec", "TokenReviewSpec") },
  TokenReviewSpec: { 1: str("token"), 2: str("audiences", REPEATED) },
  TokenRequest: { 1: msg("metadata", "ObjectMeta"), 2: msg("spec", "TokenRequestSpec") },
  TokenRequestSpec: {
    1: str("audiences", REPEATED),
    3: msg("boundObjectRef", "BoundObjectReference"),
    4: i64("expirationSeconds", POINTER),
  },
  BoundObjectReference: { 1: str("kind"), 2: str("apiVersion"), 3: str("name"), 4: str("uid") },
};
