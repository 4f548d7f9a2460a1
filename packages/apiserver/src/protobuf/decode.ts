import { type KubeObject, rfc3339 } from "@reconcile/api";
import { type FieldSpec, messages, type ScalarType, type SpecialMessage } from "./schema.js";
import { ProtobufDecodeError, ProtobufReader, type WireField, WireType } from "./wire.js";

export { ProtobufDecodeError } from "./wire.js";

/** The media type of Kubernetes protobuf bodies. */
export const protobufMediaType = "application/vnd.kubernetes.protobuf";

/** The four bytes every Kubernetes protobuf body starts with: `k8s\0`. */
const envelopeMagic = [0x6b, 0x38, 0x73, 0x00] as const;

/** Nesting deeper than this is rejected rather than recursed into. */
const maxDepth = 64;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes a Kubernetes protobuf request body (`k8s\0` + `runtime.Unknown`
 * whose `raw` is the typed object) into the object's JSON form, with
 * `apiVersion` and `kind` taken from the envelope. Throws a
 * {@link ProtobufDecodeError} naming the problem for anything malformed or
 * for a kind the decoder has no table for. `messageOf` names a kind's
 * top-level message: the server asks the kind's definition
 * (`ResourceDefinition.protobufMessage`).
 */
export function decodeKubernetesProtobuf(
  body: Uint8Array,
  messageOf: (apiVersion: string, kind: string) => string | undefined,
): KubeObject {
  if (body.length < envelopeMagic.length || envelopeMagic.some((byte, i) => body[i] !== byte)) {
    throw new ProtobufDecodeError('the body does not start with the Kubernetes protobuf prefix "k8s\\x00"');
  }
  const unknown = decodeMessage(body.subarray(envelopeMagic.length), "Unknown", 0, true);
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const apiVersion = typeMeta.apiVersion ?? "";
  const kind = typeMeta.kind ?? "";
  if (kind === "") throw new ProtobufDecodeError("the protobuf envelope names no kind");
  const encoding = unknown.contentEncoding;
  if (encoding !== undefined && encoding !== "") {
    throw new ProtobufDecodeError(`unsupported protobuf content encoding ${JSON.stringify(encoding)}`);
  }
  const message = messageOf(apiVersion, kind);
  if (message === undefined) {
    throw new ProtobufDecodeError(
      `protobuf bodies of ${apiVersion ? `${apiVersion}, ` : ""}Kind=${kind} are not supported; send JSON`,
    );
  }
  const raw = rawBytes.get(unknown) ?? new Uint8Array(0);
  return { apiVersion, kind, ...decodeMessage(raw, message, 0) };
}

/** The `raw` bytes of decoded `runtime.Unknown`s, kept out of the JSON form. */
const rawBytes = new WeakMap<object, Uint8Array>();

/** Decodes one message by its schema name into its JSON form. */
export function decodeMessage(
  bytes: Uint8Array,
  messageName: string,
  depth: number,
  keepRaw = false,
): Record<string, unknown> {
  if (depth > maxDepth) throw new ProtobufDecodeError(`messages nested deeper than ${maxDepth} levels`);
  const schema = messages[messageName];
  if (schema === undefined) throw new ProtobufDecodeError(`no schema for message ${messageName}`);
  const result: Record<string, unknown> = {};
  const reader = new ProtobufReader(bytes);
  for (let field = reader.next(); field !== undefined; field = reader.next()) {
    const spec = schema[field.number];
    if (spec === undefined) continue;
    if (keepRaw && spec.name === "raw") {
      if (field.wireType !== WireType.lengthDelimited) throw wrongWireType(messageName, spec, field);
      rawBytes.set(result, field.value);
      continue;
    }
    decodeField(result, messageName, spec, field, depth);
  }
  return result;
}

function decodeField(
  target: Record<string, unknown>,
  messageName: string,
  spec: FieldSpec,
  field: WireField,
  depth: number,
): void {
  const type = spec.type;
  if ("scalar" in type) {
    if (spec.repeated) {
      const list = (target[spec.name] ??= []) as unknown[];
      for (const value of decodeRepeatedScalar(messageName, spec, type.scalar, field)) list.push(value);
      return;
    }
    const value = decodeScalar(messageName, spec, type.scalar, field);
    if (spec.pointer || !isZero(value)) target[spec.name] = value;
    else delete target[spec.name];
    return;
  }
  if (field.wireType !== WireType.lengthDelimited) throw wrongWireType(messageName, spec, field);
  if ("special" in type) {
    const value = decodeSpecial(type.special, field.value, depth + 1);
    if (value === undefined) return;
    if (spec.repeated) ((target[spec.name] ??= []) as unknown[]).push(value);
    else target[spec.name] = value;
    return;
  }
  if ("mapOf" in type) {
    const map = (target[spec.name] ??= {}) as Record<string, unknown>;
    const entry = new ProtobufReader(field.value);
    let key = "";
    let value: unknown = defaultMapValue(type.mapOf);
    for (let part = entry.next(); part !== undefined; part = entry.next()) {
      if (part.number === 1) {
        if (part.wireType !== WireType.lengthDelimited) throw wrongWireType(messageName, spec, part);
        key = utf8Decode(part.value, spec.name);
      } else if (part.number === 2) {
        value = decodeMapValue(messageName, spec, type.mapOf, part, depth + 1);
      }
    }
    map[key] = value;
    return;
  }
  const nested = decodeMessage(field.value, type.message, depth + 1);
  if (spec.inline) {
    Object.assign(target, nested);
  } else if (spec.repeated) {
    ((target[spec.name] ??= []) as unknown[]).push(nested);
  } else {
    // A message field that occurs twice is merged, as protobuf merges it.
    const existing = target[spec.name];
    target[spec.name] =
      existing !== null && typeof existing === "object" ? { ...(existing as object), ...nested } : nested;
  }
}

function decodeScalar(messageName: string, spec: FieldSpec, scalar: ScalarType, field: WireField): unknown {
  switch (scalar) {
    case "string":
    case "bytes":
      if (field.wireType !== WireType.lengthDelimited) throw wrongWireType(messageName, spec, field);
      return scalar === "string"
        ? utf8Decode(field.value, spec.name)
        : Buffer.from(field.value).toString("base64");
    case "bool":
      if (field.wireType !== WireType.varint) throw wrongWireType(messageName, spec, field);
      return field.value !== 0;
    case "int32":
      if (field.wireType !== WireType.varint) throw wrongWireType(messageName, spec, field);
      return field.value | 0;
    case "int64":
      if (field.wireType !== WireType.varint) throw wrongWireType(messageName, spec, field);
      return field.value;
  }
}

function decodeRepeatedScalar(
  messageName: string,
  spec: FieldSpec,
  scalar: ScalarType,
  field: WireField,
): unknown[] {
  // Numbers may arrive packed (one length-delimited run of varints).
  if (scalar !== "string" && scalar !== "bytes" && field.wireType === WireType.lengthDelimited) {
    const values: unknown[] = [];
    const packed = new ProtobufReader(field.value);
    while (!packed.done) {
      const value = packed.readVarint();
      values.push(scalar === "bool" ? value !== 0 : scalar === "int32" ? value | 0 : value);
    }
    return values;
  }
  return [decodeScalar(messageName, spec, scalar, field)];
}

function decodeMapValue(
  messageName: string,
  spec: FieldSpec,
  valueType: ScalarType | SpecialMessage,
  field: WireField,
  depth: number,
): unknown {
  if (valueType === "Time" || valueType === "IntOrString" || valueType === "Quantity") {
    if (field.wireType !== WireType.lengthDelimited) throw wrongWireType(messageName, spec, field);
    return decodeSpecial(valueType, field.value, depth) ?? defaultMapValue(valueType);
  }
  return decodeScalar(messageName, spec, valueType, field);
}

function defaultMapValue(valueType: ScalarType | SpecialMessage): unknown {
  switch (valueType) {
    case "int32":
    case "int64":
      return 0;
    case "bool":
      return false;
    case "Time":
      return null;
    case "IntOrString":
      return 0;
    default:
      return "";
  }
}

/** The JSON forms of `Time`, `IntOrString` and `Quantity`; undefined for a zero Time (JSON null, left out). */
function decodeSpecial(special: SpecialMessage, bytes: Uint8Array, depth: number): unknown {
  if (depth > maxDepth) throw new ProtobufDecodeError(`messages nested deeper than ${maxDepth} levels`);
  const reader = new ProtobufReader(bytes);
  switch (special) {
    case "Time": {
      let seconds = 0;
      for (let field = reader.next(); field !== undefined; field = reader.next()) {
        if (field.number === 1 && field.wireType === WireType.varint) seconds = field.value;
      }
      if (seconds === 0) return undefined;
      const date = new Date(seconds * 1000);
      if (Number.isNaN(date.getTime())) throw new ProtobufDecodeError(`timestamp ${seconds} is out of range`);
      // metav1.Time marshals with second precision (RFC 3339).
      return rfc3339(date.getTime());
    }
    case "IntOrString": {
      let type = 0;
      let intVal = 0;
      let strVal = "";
      for (let field = reader.next(); field !== undefined; field = reader.next()) {
        if (field.number === 1 && field.wireType === WireType.varint) type = field.value;
        else if (field.number === 2 && field.wireType === WireType.varint) intVal = field.value | 0;
        else if (field.number === 3 && field.wireType === WireType.lengthDelimited)
          strVal = utf8Decode(field.value, "strVal");
      }
      return type === 1 ? strVal : intVal;
    }
    case "Quantity": {
      let value = "";
      for (let field = reader.next(); field !== undefined; field = reader.next()) {
        if (field.number === 1 && field.wireType === WireType.lengthDelimited)
          value = utf8Decode(field.value, "string");
      }
      return value;
    }
  }
}

function isZero(value: unknown): boolean {
  return value === "" || value === 0 || value === false;
}

function utf8Decode(bytes: Uint8Array, fieldName: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ProtobufDecodeError(`field ${fieldName} is not valid UTF-8`);
  }
}

function wrongWireType(messageName: string, spec: FieldSpec, field: WireField): ProtobufDecodeError {
  return new ProtobufDecodeError(
    `field ${messageName}.${spec.name} (number ${field.number}) arrived with wire type ${field.wireType}`,
  );
}
