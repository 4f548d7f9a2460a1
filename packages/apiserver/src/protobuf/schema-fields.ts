// The field-table vocabulary shared by the message tables of every API group.

export type ScalarType = "string" | "int32" | "int64" | "bool" | "bytes";

/**
 * Well-known messages with a JSON form of their own: `Time` is an RFC 3339
 * string, `IntOrString` a number or a string, `Quantity` a string.
 */
export type SpecialMessage = "Time" | "IntOrString" | "Quantity";

export type FieldType =
  | { scalar: ScalarType }
  | { message: string }
  | { special: SpecialMessage }
  | { mapOf: ScalarType | SpecialMessage };

export interface FieldSpec {
  /** The JSON name. */
  readonly name: string;
  readonly type: FieldType;
  readonly repeated?: boolean;
  /**
   * A Go pointer field: its zero value is meaningful (`replicas: 0`) and kept.
   * Other scalars are dropped when zero, as `omitempty` drops them in JSON.
   */
  readonly pointer?: boolean;
  /** Embedded with `json:",inline"`: its fields join the parent's. */
  readonly inline?: boolean;
}

export type MessageSchema = Readonly<Record<number, FieldSpec>>;

export interface Flags {
  repeated?: boolean;
  pointer?: boolean;
  inline?: boolean;
}

export const REPEATED: Flags = { repeated: true };
export const POINTER: Flags = { pointer: true };
export const INLINE: Flags = { inline: true };

export const str = (name: string, flags: Flags = {}): FieldSpec => ({
  name,
  type: { scalar: "string" },
  ...flags,
});
export const i32 = (name: string, flags: Flags = {}): FieldSpec => ({
  name,
  type: { scalar: "int32" },
  ...flags,
});
export const i64 = (name: string, flags: Flags = {}): FieldSpec => ({
  name,
  type: { scalar: "int64" },
  ...flags,
});
export const bool = (name: string, flags: Flags = {}): FieldSpec => ({
  name,
  type: { scalar: "bool" },
  ...flags,
});
/** A Go `[]byte`, base64 in JSON. */
export const bytes = (name: string): FieldSpec => ({ name, type: { scalar: "bytes" } });
export const msg = (name: string, message: string, flags: Flags = {}): FieldSpec => ({
  name,
  type: { message },
  ...flags,
});
export const time = (name: string): FieldSpec => ({ name, type: { special: "Time" } });
export const intOrString = (name: string): FieldSpec => ({ name, type: { special: "IntOrString" } });
export const quantity = (name: string): FieldSpec => ({ name, type: { special: "Quantity" } });
export const mapOf = (name: string, value: ScalarType | SpecialMessage): FieldSpec => ({
  name,
  type: { mapOf: value },
});
