import { v1 } from 'uuid';

/** A new id as RAGFlow makes them: `uuid1().hex`, 32 lowercase hex chars. */
export function newId(): string {
  return v1().replace(/-/g, '');
}

const UUID1_HEX = /^[0-9a-f]{12}1[0-9a-f]{3}[89ab][0-9a-f]{15}$/i;
const UUID1_DASHED = /^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** True for a version-1 UUID, hex or dashed, as RAGFlow's `validate_uuid1_hex` accepts. */
export function isUuid1(s: unknown): s is string {
  return typeof s === 'string' && (UUID1_HEX.test(s) || UUID1_DASHED.test(s));
}

/** Normalises a UUID1 to RAGFlow's 32-char lowercase hex form. */
export function uuidHex(s: string): string {
  return s.replace(/-/g, '').toLowerCase();
}
