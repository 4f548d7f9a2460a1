import { ReconcileError } from "@reconcile/api";

/**
 * The protobuf wire format, read-only: varints, length-delimited fields and
 * skipping. Every read is bounds-checked; malformed input throws a
 * {@link ProtobufDecodeError}, never reads past the buffer.
 */

const protobufDecodeMarker = Symbol.for("reconcile.apiserver.protobuf-decode");

/** Bytes that are not the protobuf message expected. `code` is `"apiserver.protobuf-decode"`. */
export class ProtobufDecodeError extends ReconcileError<"apiserver.protobuf-decode"> {
  readonly [protobufDecodeMarker] = true;
  constructor(message: string) {
    super("apiserver.protobuf-decode", message);
    this.name = "ProtobufDecodeError";
  }

  static override isInstance(error: unknown): error is ProtobufDecodeError {
    return ReconcileError.hasMarker(error, protobufDecodeMarker);
  }
}

export const WireType = {
  varint: 0,
  fixed64: 1,
  lengthDelimited: 2,
  startGroup: 3,
  endGroup: 4,
  fixed32: 5,
} as const;

/** One field as it appears on the wire. */
export type WireField =
  | { number: number; wireType: 0; value: number }
  | { number: number; wireType: 2; value: Uint8Array }
  | { number: number; wireType: 1 | 5; value: number };

const twoTo32 = 4294967296;

/** A cursor over one message's bytes. */
export class ProtobufReader {
  private readonly bytes: Uint8Array;
  private position = 0;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  get done(): boolean {
    return this.position >= this.bytes.length;
  }

  /**
   * Reads a varint as a signed 64-bit integer (two's complement), which is how
   * int32, int64 and bool travel. Values beyond 2^53 lose precision, as they
   * would in JSON.
   */
  readVarint(): number {
    let low = 0;
    let high = 0;
    for (let i = 0; i < 10; i++) {
      if (this.position >= this.bytes.length) throw new ProtobufDecodeError("truncated varint");
      const byte = this.bytes[this.position++]!;
      const bits = byte & 0x7f;
      if (i < 4) low |= bits << (7 * i);
      else if (i === 4) {
        low |= (bits & 0x0f) << 28;
        high |= bits >> 4;
      } else high |= bits << (7 * i - 32);
      if ((byte & 0x80) === 0) {
        low >>>= 0;
        if (high & 0x80000000) {
          // negative: two's complement of the 64-bit value
          const negLow = (~low + 1) >>> 0;
          const negHigh = (~high + (negLow === 0 ? 1 : 0)) >>> 0;
          return -(negHigh * twoTo32 + negLow);
        }
        return (high >>> 0) * twoTo32 + low;
      }
    }
    throw new ProtobufDecodeError("varint longer than 10 bytes");
  }

  readBytes(): Uint8Array {
    const length = this.readVarint();
    if (length < 0 || this.position + length > this.bytes.length) {
      throw new ProtobufDecodeError(
        `length-delimited field of ${length} bytes runs past the end of the message`,
      );
    }
    const value = this.bytes.subarray(this.position, this.position + length);
    this.position += length;
    return value;
  }

  private readFixed(size: 4 | 8): number {
    if (this.position + size > this.bytes.length)
      throw new ProtobufDecodeError("truncated fixed-width field");
    const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.position, size);
    this.position += size;
    return size === 4 ? view.getUint32(0, true) : Number(view.getBigInt64(0, true));
  }

  /** The next field, or undefined at the end of the message. Groups are rejected. */
  next(): WireField | undefined {
    if (this.done) return undefined;
    const tag = this.readVarint();
    const number = Math.floor(tag / 8);
    const wireType = tag & 7;
    if (number < 1) throw new ProtobufDecodeError(`invalid field number ${number}`);
    switch (wireType) {
      case WireType.varint:
        return { number, wireType, value: this.readVarint() };
      case WireType.lengthDelimited:
        return { number, wireType, value: this.readBytes() };
      case WireType.fixed64:
        return { number, wireType, value: this.readFixed(8) };
      case WireType.fixed32:
        return { number, wireType, value: this.readFixed(4) };
      default:
        throw new ProtobufDecodeError(`unsupported wire type ${wireType} for field ${number}`);
    }
  }
}
