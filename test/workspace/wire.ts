/**
 * A hand-written protobuf wire writer for golden bytes, independent of protobufjs: tags are
 * (field << 3) | wire type, lengths and ints are base-128 varints, little end first.
 */
export function varint(value: number | bigint): number[] {
  // int32 negatives go on the wire as 10-byte two's-complement 64-bit varints.
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}

export const tag = (field: number, wireType: number): number[] => varint((field << 3) | wireType);

const utf8 = (s: string): number[] => [...new TextEncoder().encode(s)];

/** Length-delimited string field (wire type 2). */
export const str = (field: number, s: string): number[] => [...tag(field, 2), ...varint(utf8(s).length), ...utf8(s)];

/** Varint field (wire type 0). */
export const int = (field: number, n: number | bigint): number[] => [...tag(field, 0), ...varint(n)];

/** Embedded message field (wire type 2). */
export const msg = (field: number, body: number[]): number[] => [...tag(field, 2), ...varint(body.length), ...body];

/** One map<string, Message> entry: an embedded message with key = 1, value = 2. */
export const entry = (field: number, key: string, value: number[]): number[] => msg(field, [...str(1, key), ...msg(2, value)]);

export const bytes = (...parts: number[][]): Uint8Array => Uint8Array.from(parts.flat());
