import { type ConfigMap, isConfigMapKey, jsonEqual, type Secret } from "@reconcile/api";
import type { FieldErrors } from "../registry/field-errors.js";
import type { Strategy } from "../registry/strategy.js";

// ConfigMaps and Secrets as upstream validates and converts them
// (`ValidateConfigMap`, `ValidateSecret` and their updates in
// pkg/apis/core/validation, `Convert_v1_Secret_To_core_Secret`).

/** The most a ConfigMap's or Secret's values may hold together (upstream `MaxSecretSize`). */
const maxDataBytes = 1024 * 1024;

/** The bytes base64 `text` decodes to. */
function decodedLength(text: string): number {
  let padding = 0;
  if (text.endsWith("==")) padding = 2;
  else if (text.endsWith("=")) padding = 1;
  return Math.floor((text.length * 3) / 4) - padding;
}

function checkKey(errors: FieldErrors, path: string, key: string): void {
  for (const message of isConfigMapKey(key)) errors.invalid(`${path}[${key}]`, key, message);
}

/** An object whose `immutable` was set keeps it, and keeps `fields` as they were. */
function checkImmutable(
  errors: FieldErrors,
  object: { immutable?: boolean | undefined },
  old: { immutable?: boolean | undefined },
  fields: Record<string, [unknown, unknown]>,
): void {
  if (old.immutable !== true) return;
  const message = "field is immutable when `immutable` is set";
  if (object.immutable !== true) errors.forbidden("immutable", message);
  for (const [field, [now, before]] of Object.entries(fields))
    if (!jsonEqual(now ?? {}, before ?? {})) errors.forbidden(field, message);
}

export const configMapStrategy: Strategy = {
  validate(object, errors) {
    const configMap = object as ConfigMap;
    const data = configMap.data ?? {};
    const binary = configMap.binaryData ?? {};
    let size = 0;
    for (const [key, value] of Object.entries(data)) {
      checkKey(errors, "data", key);
      if (Object.hasOwn(binary, key))
        errors.invalid(`data[${key}]`, key, "duplicate of key present in binaryData");
      size += Buffer.byteLength(value);
    }
    for (const key of Object.keys(binary)) checkKey(errors, "binaryData", key);
    for (const value of Object.values(binary)) size += decodedLength(value);
    if (size > maxDataBytes) errors.tooLong("", maxDataBytes);
  },
  validateUpdate(object, old, errors) {
    const now = object as ConfigMap;
    const before = old as ConfigMap;
    checkImmutable(errors, now, before, {
      data: [now.data, before.data],
      binaryData: [now.binaryData, before.binaryData],
    });
  },
};

/** The keys each Secret type must hold in `data` (upstream `ValidateSecret`). */
function checkTypeKeys(errors: FieldErrors, secret: Secret): void {
  const data = secret.data ?? {};
  const has = (key: string) => Object.hasOwn(data, key);
  const jsonKey = (key: string) => {
    if (!has(key)) {
      errors.required(`data[${key}]`);
      return;
    }
    try {
      // Decoded into a map as upstream decodes it: null is an empty map, anything else but an object is not one.
      const parsed = JSON.parse(Buffer.from(data[key]!, "base64").toString("utf8")) as unknown;
      const kind = Array.isArray(parsed) ? "array" : typeof parsed === "boolean" ? "bool" : typeof parsed;
      if (parsed !== null && kind !== "object")
        errors.invalid(
          `data[${key}]`,
          "<secret contents redacted>",
          `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`,
        );
    } catch (error) {
      errors.invalid(`data[${key}]`, "<secret contents redacted>", (error as Error).message);
    }
  };
  switch (secret.type) {
    case "kubernetes.io/service-account-token":
      if (!secret.metadata?.annotations?.["kubernetes.io/service-account.name"])
        errors.required("metadata.annotations[kubernetes.io/service-account.name]");
      return;
    case "kubernetes.io/dockercfg":
      jsonKey(".dockercfg");
      return;
    case "kubernetes.io/dockerconfigjson":
      jsonKey(".dockerconfigjson");
      return;
    case "kubernetes.io/basic-auth":
      if (!has("username") && !has("password")) {
        errors.required("data[username]");
        errors.required("data[password]");
      }
      return;
    case "kubernetes.io/ssh-auth":
      if (decodedLength(data["ssh-privatekey"] ?? "") === 0) errors.required("data[ssh-privatekey]");
      return;
    case "kubernetes.io/tls":
      if (!has("tls.crt")) errors.required("data[tls.crt]");
      if (!has("tls.key")) errors.required("data[tls.key]");
      return;
  }
}

/**
 * Secrets as upstream's `SetDefaults_Secret`, conversion and `ValidateSecret`:
 * `stringData` is written into `data` (its values win) and never stored; the
 * type defaults to `Opaque` and never changes; keys are config keys; each
 * type holds the keys it needs.
 */
export const secretStrategy: Strategy = {
  applyDefaults(object) {
    const secret = object as Secret;
    if (!secret.type) secret.type = "Opaque";
    const stringData = secret.stringData;
    if (stringData === undefined) return;
    delete secret.stringData;
    if (Object.keys(stringData).length === 0) return;
    const data = (secret.data ??= {});
    for (const [key, value] of Object.entries(stringData))
      data[key] = Buffer.from(value, "utf8").toString("base64");
  },
  validate(object, errors) {
    const secret = object as Secret;
    const data = secret.data ?? {};
    let size = 0;
    for (const [key, value] of Object.entries(data)) {
      checkKey(errors, "data", key);
      size += decodedLength(value);
    }
    if (size > maxDataBytes) errors.tooLong("data", maxDataBytes);
    checkTypeKeys(errors, secret);
  },
  validateUpdate(object, old, errors) {
    const now = object as Secret;
    const before = old as Secret;
    if (now.type !== before.type) errors.invalid("type", now.type, "field is immutable");
    checkImmutable(errors, now, before, { data: [now.data, before.data] });
  },
};
