/** Rows the contract tests start from, written through the store interface itself. */
import type { Ctx, DatasetRow, DocumentRow, NewChunk, Store } from '../../../src/store/index.js';
import { newId } from '../../../src/util/index.js';

export const EMBD = 'contract-embed@Test';

export async function seedTenant(s: Store): Promise<Ctx> {
  return s.accounts.ensureLocal({ embd_id: EMBD, llm_id: '' });
}

/** A tenant of its own (a user in it, owner), as `users.create` makes one. */
export async function seedOtherTenant(s: Store, name = 'other'): Promise<Ctx> {
  const who = { tenantId: newId(), userId: newId() };
  await s.accounts.createAccount({
    tenant: { id: who.tenantId, name, embd_id: EMBD, llm_id: '' }, user: { id: who.userId, nickname: name, email: '', password: '' },
    key: { token_sha256: `key-${who.userId}`, source: 'user', hint: '' }, create_time: 0,
  });
  return who;
}

export async function seedDataset(s: Store, who: Ctx, name = 'ds', extra: Partial<DatasetRow> = {}): Promise<DatasetRow> {
  const id = newId();
  const t = Date.now();
  await s.datasets.create({
    id, tenant_id: who.tenantId, name, avatar: null, description: null, embd_id: EMBD, permission: 'me', created_by: who.userId,
    parser_id: 'naive', parser_config: '{}', create_time: t, update_time: t, ...extra,
  });
  return (await s.datasets.get(id))!;
}

/** Text files of these names (their bytes: `bytes?.(name)` or the name). */
export async function seedDocuments(s: Store, who: Ctx, ds: DatasetRow, names: string[], bytes?: (name: string) => Uint8Array): Promise<DocumentRow[]> {
  const ids = names.map(() => newId());
  await s.documents.upload(
    { dataset_id: ds.id, parser_config: ds.parser_config, created_by: who.userId, time: Date.now(), kindOf: (n) => ({ suffix: n.split('.').pop() ?? '', type: 'doc', parser_id: 'naive' }) },
    names.map((n) => ({ name: n, bytes: bytes?.(n) ?? new TextEncoder().encode(n) })),
    ids,
  );
  const got = await s.documents.getMany(ds.id, ids);
  return ids.map((id) => got.get(id)!);
}

/** A unit vector of `dim` from a seed. */
export function vec(dim: number, seed: number): Float32Array {
  let x = seed * 7919 + 1;
  const v = Float32Array.from({ length: dim }, () => ((x = (x * 16807) % 2147483647) / 2147483647) - 0.5);
  const n = Math.hypot(...v);
  return v.map((a) => a / n);
}

export const DIM = 8;

/** A chunk of `doc` (content `text`). */
export function chunkOf(doc: Pick<DocumentRow, 'id' | 'dataset_id' | 'name'>, text: string, seed: number, extra: Partial<NewChunk> = {}): Omit<NewChunk, 'chunk_order'> {
  return {
    id: newId(), document_id: doc.id, dataset_id: doc.dataset_id, content: text, title: doc.name, important_keywords: [], questions: [], tag_kwd: [],
    positions: [], available: true, token_num: text.split(' ').length, create_time: '2024-01-01 00:00:00', create_timestamp: 1_700_000_000 + seed,
    vector: vec(DIM, seed), ...extra,
  };
}
