import type { OpenAPIDefinition } from "./kind-schema.js";

/** The media type kubectl asks `/openapi/v2` for: gnostic's `openapi.v2.Document` in protobuf. */
export const openAPIV2ProtobufType = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/**
 * The OpenAPI v2 document of the served kinds' definitions, as kube-apiserver
 * publishes a CRD's schema there: `anyOf`, `oneOf` and `not` dropped, and no
 * `type` on nullable or `x-kubernetes-preserve-unknown-fields` nodes (v2 cannot
 * say either). kubectl validates manifests against it client-side where the
 * server cannot (the items of a `kind: List`).
 */
export function openAPIV2Document(definitions: Readonly<Record<string, OpenAPIDefinition>>): object {
  const converted: Record<string, unknown> = {};
  for (const name of Object.keys(definitions).sort()) converted[name] = toV2(definitions[name]);
  return {
    swagger: "2.0",
    info: { title: "Kubernetes", version: "v1.32.0" },
    paths: {},
    definitions: converted,
  };
}

/** The document in gnostic's protobuf encoding (`openapi_v2.Document`), which kubectl decodes. */
export function encodeOpenAPIV2(document: {
  swagger?: unknown;
  info?: unknown;
  definitions?: unknown;
}): Buffer {
  const out = new Writer();
  out.string(1, String(document.swagger ?? "2.0"));
  const info = (document.info ?? {}) as { title?: string; version?: string };
  out.message(2, (w) => {
    w.string(1, info.title ?? "");
    w.string(2, info.version ?? "");
  });
  out.message(8, () => {});
  out.message(9, (w) => {
    for (const [name, schema] of Object.entries((document.definitions ?? {}) as Record<string, unknown>))
      w.message(1, (named) => {
        named.string(1, name);
        named.message(2, (s) => writeSchema(s, schema as Record<string, unknown>));
      });
  });
  return out.finish();
}

function toV2(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toV2);
  if (schema === null || typeof schema !== "object") return schema;
  const source = schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const untyped = source.nullable === true || source["x-kubernetes-preserve-unknown-fields"] === true;
  for (const [key, value] of Object.entries(source)) {
    if (key === "anyOf" || key === "oneOf" || key === "not") continue;
    if (key === "type" && untyped) continue;
    if (key === "properties" && value !== null && typeof value === "object")
      out[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, toV2(child)]));
    else if (key === "items" || key === "additionalProperties" || key === "allOf") out[key] = toV2(value);
    else out[key] = value;
  }
  return out;
}

/** gnostic's `openapi.v2.Schema`, the fields kubectl reads. */
function writeSchema(w: Writer, schema: Record<string, unknown>): void {
  const text = (field: number, value: unknown) => {
    if (typeof value === "string") w.string(field, value);
  };
  const number = (field: number, value: unknown) => {
    if (typeof value === "number") w.double(field, value);
  };
  const integer = (field: number, value: unknown) => {
    if (typeof value === "number") w.varint(field, value);
  };
  text(1, schema.$ref);
  text(2, schema.format);
  text(3, schema.title);
  text(4, schema.description);
  if (schema.default !== undefined) w.message(5, (any) => any.string(2, JSON.stringify(schema.default)));
  number(6, schema.multipleOf);
  number(7, schema.maximum);
  if (schema.exclusiveMaximum === true) w.varint(8, 1);
  number(9, schema.minimum);
  if (schema.exclusiveMinimum === true) w.varint(10, 1);
  integer(11, schema.maxLength);
  integer(12, schema.minLength);
  text(13, schema.pattern);
  integer(14, schema.maxItems);
  integer(15, schema.minItems);
  if (schema.uniqueItems === true) w.varint(16, 1);
  integer(17, schema.maxProperties);
  integer(18, schema.minProperties);
  if (Array.isArray(schema.required)) for (const name of schema.required) text(19, name);
  if (Array.isArray(schema.enum))
    for (const value of schema.enum) w.message(20, (any) => any.string(2, JSON.stringify(value)));
  const additional = schema.additionalProperties;
  if (typeof additional === "boolean") w.message(21, (item) => item.varint(2, additional ? 1 : 0));
  else if (isRecord(additional)) w.message(21, (item) => item.message(1, (s) => writeSchema(s, additional)));
  if (typeof schema.type === "string") {
    const type = schema.type;
    w.message(22, (item) => item.string(1, type));
  }
  const items = schema.items;
  if (isRecord(items)) w.message(23, (item) => item.message(1, (s) => writeSchema(s, items)));
  if (Array.isArray(schema.allOf))
    for (const part of schema.allOf) if (isRecord(part)) w.message(24, (s) => writeSchema(s, part));
  const properties = schema.properties;
  if (isRecord(properties))
    w.message(25, (props) => {
      for (const [name, property] of Object.entries(properties))
        if (isRecord(property))
          props.message(1, (named) => {
            named.string(1, name);
            named.message(2, (s) => writeSchema(s, property));
          });
    });
  for (const [key, value] of Object.entries(schema))
    if (key.startsWith("x-"))
      // A vendor extension's value travels as YAML text; JSON is YAML.
      w.message(31, (named) => {
        named.string(1, key);
        named.message(2, (any) => any.string(2, `${JSON.stringify(value)}\n`));
      });
}

/** A protobuf writer: fields appended to chunks, nested messages measured once finished. */
class Writer {
  readonly #chunks: Buffer[] = [];

  varint(field: number, value: number): void {
    this.#tag(field, 0);
    this.#raw(varint(value));
  }

  double(field: number, value: number): void {
    this.#tag(field, 1);
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(value);
    this.#raw(bytes);
  }

  string(field: number, value: string): void {
    this.bytes(field, Buffer.from(value, "utf8"));
  }

  bytes(field: number, value: Buffer): void {
    this.#tag(field, 2);
    this.#raw(varint(value.length));
    this.#raw(value);
  }

  message(field: number, write: (writer: Writer) => void): void {
    const nested = new Writer();
    write(nested);
    this.bytes(field, nested.finish());
  }

  finish(): Buffer {
    return Buffer.concat(this.#chunks);
  }

  #tag(field: number, wireType: number): void {
    this.#raw(varint(field * 8 + wireType));
  }

  #raw(bytes: Buffer): void {
    this.#chunks.push(bytes);
  }
}

function varint(value: number): Buffer {
  // Negative int64 values take ten bytes in two's complement.
  let n = BigInt.asUintN(64, BigInt(Math.trunc(value)));
  const bytes: number[] = [];
  do {
    let byte = Number(n & 0x7fn);
    n >>= 7n;
    if (n !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (n !== 0n);
  return Buffer.from(bytes);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
