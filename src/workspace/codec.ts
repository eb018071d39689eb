import protobuf from 'protobufjs';
import { fail } from './errors.js';
import { MessageTypes } from './schema.js';
import type { RecordKind, RecordOf, WorkspaceMessage } from './types.js';

type Type = protobuf.Type;
type Plain = Record<string, unknown>;

/** Proto message name of each record kind. */
export const MESSAGE_NAME: Readonly<Record<RecordKind, keyof typeof MessageTypes>> = {
  dataset: 'Dataset',
  project: 'Project',
  task: 'Task',
  pretrained_model: 'PretrainedModel',
  exported_model: 'ExportedModel',
};

// Field-number order: protoc writes known fields this way, and protobufjs's encoder sorts
// the same way, so plain objects built in this order also print in wire order.
const fieldsOf = (t: Type): protobuf.Field[] =>
  t.fieldsArray.slice().sort((a, b) => a.id - b.id).map((f) => f.resolve());

/** Raw unknown fields (tag included) of a decoded message, or undefined. */
export function unknownsOf(m: object): Uint8Array[] | undefined {
  const u = (m as { $unknowns?: Uint8Array[] }).$unknowns;
  return u && u.length ? u : undefined;
}

/** Attaches raw unknown fields as the non-enumerable `$unknowns` protobufjs writes back. */
export function setUnknowns<T extends object>(m: T, unknowns: readonly Uint8Array[] | undefined): T {
  if (unknowns && unknowns.length) {
    Object.defineProperty(m, '$unknowns', {
      value: unknowns.map((u) => Uint8Array.from(u)),
      enumerable: false,
      writable: true,
      configurable: true,
    });
  }
  return m;
}

// A map key such as "__proto__" must become an own property, not a prototype change.
function setKey(o: Plain, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** Converts a decoded protobufjs message into a plain object holding every field (proto3 defaults). */
function toPlain(t: Type, m: Plain): Plain {
  const out: Plain = {};
  for (const f of fieldsOf(t)) {
    const v = m[f.name];
    if (f.map) {
      const o: Plain = {};
      for (const [k, e] of Object.entries((v ?? {}) as Record<string, Plain>)) {
        setKey(o, k, toPlain(f.resolvedType as Type, e));
      }
      out[f.name] = o;
    } else if (f.type === 'string') {
      out[f.name] = typeof v === 'string' ? v : '';
    } else {
      out[f.name] = typeof v === 'number' ? v : 0;
    }
  }
  return setUnknowns(out, unknownsOf(m));
}

function decodeWith(t: Type, bytes: Uint8Array, what: string): Plain {
  if (!(bytes instanceof Uint8Array)) fail('INVALID_MESSAGE', [`${what}: expected bytes (a Uint8Array or Buffer), got ${bytes === null || bytes === undefined ? 'nothing' : `a ${typeof bytes}`}`]);
  const reader = protobuf.Reader.create(bytes);
  // Per reader, not the global Reader.discardUnknown, so other protobufjs users are untouched.
  reader.discardUnknown = false;
  try {
    return toPlain(t, t.decode(reader) as unknown as Plain);
  } catch (e) {
    return fail('CORRUPT_FILE', [what, e instanceof Error ? e.message : String(e)], { cause: e });
  }
}

/**
 * Decodes the binary `suitebackend.Workspace` PaddleX writes. Every field is present (proto3
 * defaults); no value is mapped or checked — that is the record model's job.
 * @throws WorkspaceError CORRUPT_FILE when the bytes are not a Workspace message.
 */
export function decodeWorkspace(bytes: Uint8Array, what = 'workspace message'): WorkspaceMessage {
  return decodeWith(MessageTypes.Workspace, bytes, what) as unknown as WorkspaceMessage;
}

/** Decodes one record message, e.g. an `info.pb`. */
export function decodeRecord<K extends RecordKind>(kind: K, bytes: Uint8Array, what = `${kind} message`): RecordOf[K] {
  return decodeWith(MessageTypes[MESSAGE_NAME[kind]], bytes, what) as unknown as RecordOf[K];
}

function encodeWith(t: Type, m: object): Uint8Array {
  checkMessage(t, m as Plain, t.name);
  return Uint8Array.from(t.encode(m).finish());
}

/**
 * Encodes a Workspace message: known fields in field-number order, empty strings and zeros
 * left out, map entries as key=1 / value=2 in the object's key order, then `$unknowns`.
 * @throws WorkspaceError INVALID_MESSAGE when a field has the wrong type.
 */
export function encodeWorkspace(m: WorkspaceMessage): Uint8Array {
  return encodeWith(MessageTypes.Workspace, m);
}

/** Encodes one record message (the bytes of an `info.pb`). */
export function encodeRecord<K extends RecordKind>(kind: K, rec: RecordOf[K]): Uint8Array {
  return encodeWith(MessageTypes[MESSAGE_NAME[kind]], rec);
}

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

// protobufjs encodes whatever it is given; a wrong type would write garbage or throw deep inside.
function checkMessage(t: Type, m: Plain, where: string): void {
  if (m === null || typeof m !== 'object') fail('INVALID_MESSAGE', [`${where} is not an object`]);
  for (const f of fieldsOf(t)) {
    const v = m[f.name];
    if (v === undefined) continue;
    if (f.map) {
      if (v === null || typeof v !== 'object') fail('INVALID_MESSAGE', [`${where}.${f.name} is not an object`]);
      for (const [k, e] of Object.entries(v as Record<string, Plain>)) {
        checkMessage(f.resolvedType as Type, e, `${where}.${f.name}[${JSON.stringify(k)}]`);
      }
    } else if (f.type === 'string') {
      if (typeof v !== 'string') fail('INVALID_MESSAGE', [`${where}.${f.name} is not a string`]);
    } else if (!Number.isInteger(v) || (v as number) < INT32_MIN || (v as number) > INT32_MAX) {
      fail('INVALID_MESSAGE', [`${where}.${f.name} is not an int32`]);
    }
  }
}

/** lowerCamelCase JSON name of a proto field, as protobuf's JSON mapping spells it. */
const jsonName = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function fromJSONValue(t: Type, v: unknown, where: string): Plain {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail('INVALID_MESSAGE', [`${where} is not an object`]);
  const src = v as Plain;
  const byName = new Map<string, protobuf.Field>();
  for (const f of fieldsOf(t)) {
    byName.set(f.name, f);
    byName.set(jsonName(f.name), f);
  }
  for (const k of Object.keys(src)) {
    if (!byName.has(k)) fail('INVALID_MESSAGE', [`${where} has no field "${k}"`]);
  }
  const out: Plain = {};
  for (const f of fieldsOf(t)) {
    const raw = src[f.name] !== undefined ? src[f.name] : src[jsonName(f.name)];
    const at = `${where}.${f.name}`;
    if (f.map) {
      const o: Plain = {};
      if (raw !== undefined && raw !== null) {
        if (typeof raw !== 'object' || Array.isArray(raw)) fail('INVALID_MESSAGE', [`${at} is not an object`]);
        for (const [k, e] of Object.entries(raw as Plain)) {
          setKey(o, k, fromJSONValue(f.resolvedType as Type, e, `${at}[${JSON.stringify(k)}]`));
        }
      }
      out[f.name] = o;
    } else if (f.type === 'string') {
      if (raw !== undefined && raw !== null && typeof raw !== 'string') fail('INVALID_MESSAGE', [`${at} is not a string`]);
      out[f.name] = raw ?? '';
    } else {
      // Proto3 JSON allows int32 as a number or a decimal string.
      const n = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : (raw ?? 0);
      if (!Number.isInteger(n) || (n as number) < INT32_MIN || (n as number) > INT32_MAX) {
        fail('INVALID_MESSAGE', [`${at} is not an int32`]);
      }
      out[f.name] = n;
    }
  }
  return out;
}

/**
 * Reads the JSON form of a Workspace message: proto field names (as `toJSON()` writes them)
 * or protobuf's lowerCamelCase JSON names, int32 as numbers or decimal strings, missing fields
 * as defaults. Unknown keys are refused, as protobuf's JSON parser does by default.
 */
export function workspaceFromJSON(json: string | object): WorkspaceMessage {
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (e) {
      fail('INVALID_MESSAGE', [e instanceof Error ? e.message : String(e)], { cause: e });
    }
  }
  return fromJSONValue(MessageTypes.Workspace, value, 'Workspace') as unknown as WorkspaceMessage;
}

/** An empty Workspace message (all defaults). */
export function emptyWorkspaceMessage(): WorkspaceMessage {
  return toPlain(MessageTypes.Workspace, {}) as unknown as WorkspaceMessage;
}
