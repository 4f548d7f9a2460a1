/**
 * Field tables of the Kubernetes protobuf messages the server decodes: the
 * kinds kubectl's imperative generators send (`create namespace|deployment|
 * service|configmap|secret|job`, and those of the kinds served as storage
 * only: see `schema-storage-kinds.ts`) and every message nested in them. Field
 * numbers and types are those of k8s.io/api and k8s.io/apimachinery's
 * `generated.proto`; JSON names are the Go structs' `json` tags.
 *
 * Fields not listed are skipped, as protobuf skips unknown fields.
 */

import { appsBatchMessages } from "./schema-apps-batch.js";
import { authMessages } from "./schema-auth.js";
import { coreMessages } from "./schema-core.js";
import type { MessageSchema } from "./schema-fields.js";
import { metaMessages } from "./schema-meta.js";
import { storageKindMessages } from "./schema-storage-kinds.js";

export type { FieldSpec, FieldType, MessageSchema, ScalarType, SpecialMessage } from "./schema-fields.js";

/** Every message the decoder knows, by name. */
export const messages: Readonly<Record<string, MessageSchema>> = {
  ...metaMessages,
  ...coreMessages,
  ...appsBatchMessages,
  ...storageKindMessages,
  ...authMessages,
};
