/**
 * What test/faults/crash-matrix.test.ts checks on a reopened database:
 *
 * - `checkInvariants(db)`: the rules that hold for every consistent ragloom file, whatever it
 *   holds — SQLite and FTS5 integrity, foreign keys, chunk rows ↔ full-text rows ↔ vector rows
 *   one to one, memory messages ↔ their full-text rows, memory totals equal to the sums over the
 *   messages, no document RUNNING, blobs referenced ↔ stored, document and dataset counters equal
 *   to their rows, chat and agent sessions whose messages, rounds and canvas state agree, agents
 *   whose newest version holds their canvas. Returns one line per rule broken (empty = consistent).
 * - `snapshot(db)`: the file's logical content without ids, times or other values a run makes up
 *   anew, so that the state after a crash can be compared with the state before the operation and
 *   the state after a good run of it (atomicity: it must equal one of the two).
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../src/store/index.js';

type Row = Record<string, unknown>;

const all = (db: Db, sql: string, ...p: unknown[]): Row[] => db.prepare(sql).all(...p) as Row[];
const pluck = (db: Db, sql: string, ...p: unknown[]): unknown[] => db.prepare(sql).pluck().all(...p);
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const parse = (s: unknown): unknown => {
  try {
    return JSON.parse(String(s));
  } catch {
    return null;
  }
};

/** The names of the rules, as they head each line `checkInvariants` returns. */
export const RULES = [
  'integrity_check', 'foreign keys', 'fts5 integrity', 'chunk ↔ FTS', 'chunk ↔ vector', 'memory ↔ FTS', 'memory totals',
  'document RUNNING', 'parse owners', 'blobs', 'counters', 'chat sessions', 'agent sessions', 'agent versions',
] as const;
export type Rule = (typeof RULES)[number];

function diff(a: Iterable<unknown>, b: Iterable<unknown>): { missing: unknown[]; extra: unknown[] } {
  const sa = new Set(a);
  const sb = new Set(b);
  return { missing: [...sa].filter((x) => !sb.has(x)), extra: [...sb].filter((x) => !sa.has(x)) };
}

/** Every rule broken, as `rule: detail` lines; empty when the file is consistent. */
export function checkInvariants(db: Db): string[] {
  const out: string[] = [];
  const broken = (rule: Rule, detail: string) => out.push(`${rule}: ${detail}`);

  const ic = all(db, 'PRAGMA integrity_check').map((r) => Object.values(r)[0]);
  if (ic.length !== 1 || ic[0] !== 'ok') broken('integrity_check', ic.slice(0, 3).join('; '));
  const fk = all(db, 'PRAGMA foreign_key_check');
  if (fk.length) broken('foreign keys', `${fk.length} rows point nowhere (${[...new Set(fk.map((r) => r.table))].join(', ')})`);
  for (const t of ['chunk_fts', 'memory_fts']) {
    try {
      db.exec(`INSERT INTO ${t} (${t}) VALUES ('integrity-check')`);
    } catch (e) {
      broken('fts5 integrity', `${t}: ${(e as Error).message}`);
    }
  }

  // Chunks: one full-text row and one vector row (in the table of its dimension, in its dataset's partition) each.
  const chunks = all(db, 'SELECT rowid, dataset_id, vec_dim FROM chunk') as Array<{ rowid: number; dataset_id: string; vec_dim: number }>;
  const fts = pluck(db, 'SELECT rowid FROM chunk_fts') as number[];
  const f = diff(chunks.map((c) => c.rowid), fts);
  if (f.missing.length || f.extra.length || fts.length !== new Set(fts).size) {
    broken('chunk ↔ FTS', `${chunks.length} chunks, ${fts.length} FTS rows; without FTS row: [${f.missing.slice(0, 5)}], FTS rows without chunk: [${f.extra.slice(0, 5)}]`);
  }
  const tables = new Map((all(db, 'SELECT dim, table_name FROM vec_index') as Array<{ dim: number; table_name: string }>).map((r) => [r.dim, r.table_name]));
  const vecProblems: string[] = [];
  for (const [dim, table] of tables) {
    const rows = all(db, `SELECT rowid, dataset_id FROM ${table}`) as Array<{ rowid: number; dataset_id: string }>;
    const want = chunks.filter((c) => c.vec_dim === dim);
    const v = diff(want.map((c) => c.rowid), rows.map((r) => r.rowid));
    if (v.missing.length) vecProblems.push(`${table}: chunks without vector [${v.missing.slice(0, 5)}]`);
    if (v.extra.length) vecProblems.push(`${table}: vectors without chunk [${v.extra.slice(0, 5)}]`);
    const ds = new Map(want.map((c) => [c.rowid, c.dataset_id]));
    const wrong = rows.filter((r) => ds.has(r.rowid) && ds.get(r.rowid) !== r.dataset_id);
    if (wrong.length) vecProblems.push(`${table}: ${wrong.length} vectors in another dataset's partition`);
  }
  const noTable = chunks.filter((c) => c.vec_dim > 0 && !tables.has(c.vec_dim));
  if (noTable.length) vecProblems.push(`${noTable.length} chunks of a dimension without a vector table`);
  if (vecProblems.length) broken('chunk ↔ vector', vecProblems.join('; '));

  // Memory messages: one full-text row each; the memory's totals are the sums over its messages.
  const msgIds = pluck(db, 'SELECT id FROM memory_message') as number[];
  const mfts = pluck(db, 'SELECT rowid FROM memory_fts') as number[];
  const m = diff(msgIds, mfts);
  if (m.missing.length || m.extra.length) broken('memory ↔ FTS', `${msgIds.length} messages, ${mfts.length} FTS rows`);
  for (const r of all(db, `SELECT m.name, m.used_bytes, m.message_count, m.memory_size, COALESCE(SUM(x.size), 0) AS sum, COUNT(x.id) AS n
      FROM memory m LEFT JOIN memory_message x ON x.memory_id = m.id GROUP BY m.id`)) {
    if (r.used_bytes !== r.sum || r.message_count !== r.n || (r.used_bytes as number) > (r.memory_size as number)) {
      broken('memory totals', `${String(r.name)}: used_bytes ${r.used_bytes} / message_count ${r.message_count}, messages sum to ${r.sum} / ${r.n} (budget ${r.memory_size})`);
    }
  }
  const miscosted = all(db, 'SELECT id, content, dim, size, vector FROM memory_message')
    .filter((r) => r.size !== Buffer.byteLength(String(r.content)) + 4 * (r.dim as number) || (r.vector ? (r.vector as Buffer).length : 0) !== 4 * (r.dim as number));
  if (miscosted.length) broken('memory totals', `${miscosted.length} messages whose size is not their content + vector`);

  const running = pluck(db, "SELECT name FROM document WHERE run = '1'");
  if (running.length) broken('document RUNNING', running.join(', '));
  // parse_owner says who is parsing a document: at rest, nobody owns a document that is not RUNNING.
  const owned = pluck(db, "SELECT o.document_id FROM parse_owner o LEFT JOIN document d ON d.id = o.document_id WHERE d.run IS NOT '1'");
  if (owned.length) broken('parse owners', `${owned.length} parse_owner rows for documents nobody is parsing`);

  // Blobs: each document's bytes stored, no blob without a document, each blob's hash and size right.
  const missingBlob = pluck(db, 'SELECT d.name FROM document d LEFT JOIN blob b ON b.sha256 = d.blob_sha256 WHERE b.sha256 IS NULL');
  if (missingBlob.length) broken('blobs', `documents without their bytes: ${missingBlob.join(', ')}`);
  const orphan = pluck(db, 'SELECT sha256 FROM blob WHERE sha256 NOT IN (SELECT blob_sha256 FROM document)') as string[];
  if (orphan.length) broken('blobs', `${orphan.length} blobs no document references`);
  const bad = all(db, 'SELECT sha256, size, data FROM blob').filter((b) => sha256(b.data as Buffer) !== b.sha256 || (b.data as Buffer).length !== b.size);
  if (bad.length) broken('blobs', `${bad.length} blobs whose bytes do not match their hash or size`);

  const docCounts = all(db, `SELECT d.name, d.chunk_num, d.token_num, COUNT(c.rowid) AS n, COALESCE(SUM(c.token_num), 0) AS t
    FROM document d LEFT JOIN chunk c ON c.document_id = d.id GROUP BY d.id HAVING d.chunk_num != n OR d.token_num != t`);
  for (const r of docCounts) broken('counters', `document ${String(r.name)}: chunk_num ${r.chunk_num} / token_num ${r.token_num}, rows ${r.n} / ${r.t}`);
  const dsCounts = all(db, `SELECT s.name, s.doc_num, s.chunk_num, s.token_num, COUNT(d.id) AS n, COALESCE(SUM(d.chunk_num), 0) AS c, COALESCE(SUM(d.token_num), 0) AS t
    FROM dataset s LEFT JOIN document d ON d.dataset_id = s.id GROUP BY s.id HAVING s.doc_num != n OR s.chunk_num != c OR s.token_num != t`);
  for (const r of dsCounts) broken('counters', `dataset ${String(r.name)}: ${r.doc_num}/${r.chunk_num}/${r.token_num}, documents say ${r.n}/${r.c}/${r.t}`);

  // Chat sessions: the prologue first, then question/answer pairs (each pair written in one
  // transaction). A completion passing the whole history replaces the stored messages with the
  // request's, which RAGFlow keeps from the first question on: then there is no prologue.
  for (const s of all(db, 'SELECT id, name FROM chat_session')) {
    const roles = pluck(db, 'SELECT role FROM chat_message WHERE session_id = ? ORDER BY seq', s.id) as string[];
    const pairs = roles[0] === 'assistant' ? roles.slice(1) : roles;
    const whole = roles.length > 0 && pairs.length % 2 === 0 && pairs.every((r, i) => r === (i % 2 ? 'assistant' : 'user'));
    if (!whole) broken('chat sessions', `${String(s.name)}: messages ${roles.join(',') || '(none)'}`);
  }
  // Agent sessions: one user message per round, and the canvas state (dsl) saved with them.
  for (const s of all(db, 'SELECT id, name, round, dsl FROM agent_session')) {
    const users = pluck(db, "SELECT COUNT(*) FROM agent_message WHERE session_id = ? AND role = 'user'", s.id)[0] as number;
    const history = ((parse(s.dsl) as { history?: unknown[] } | null)?.history ?? []).filter((h) => Array.isArray(h) && h[0] === 'user').length;
    if (users !== s.round || history !== s.round) broken('agent sessions', `${String(s.name)}: round ${s.round}, ${users} user messages, ${history} user turns in its dsl`);
  }
  // Agents: written with their first version; the newest version holds the agent's canvas; at most 20 unreleased.
  for (const a of all(db, 'SELECT id, title, dsl FROM agent')) {
    const v = all(db, 'SELECT dsl, release FROM agent_version WHERE agent_id = ? ORDER BY create_time DESC, rowid DESC', a.id);
    if (!v.length) broken('agent versions', `${String(a.title)}: no version`);
    else if (v[0]!.dsl !== a.dsl) broken('agent versions', `${String(a.title)}: the newest version's dsl is not the agent's`);
    if (v.filter((x) => x.release === 0).length > 20) broken('agent versions', `${String(a.title)}: more than 20 unreleased versions`);
  }
  return out;
}

/** The logical content: what a user sees, without ids, times and run-made values. */
export function snapshot(db: Db): Record<string, unknown> {
  const datasets = all(db, 'SELECT id, name, doc_num, chunk_num, token_num FROM dataset ORDER BY name').map(({ id, ...d }) => ({
    ...d,
    documents: all(db, 'SELECT id, name, size, blob_sha256, run, status, chunk_num, token_num FROM document WHERE dataset_id = ? ORDER BY name', id).map(({ id: doc, ...r }) => ({
      ...r,
      chunks: all(db, 'SELECT id, content, available, token_num, important_keywords, questions, vec_dim FROM chunk WHERE document_id = ? ORDER BY id', doc),
    })),
  }));
  const chats = all(db, 'SELECT id, name, status FROM chat ORDER BY name').map(({ id, ...c }) => ({
    ...c,
    sessions: all(db, 'SELECT id, name FROM chat_session WHERE chat_id = ?', id)
      .map((s) => ({ name: s.name, messages: all(db, 'SELECT role, content FROM chat_message WHERE session_id = ? ORDER BY seq', s.id) }))
      .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
  }));
  const memories = all(db, 'SELECT id, name, used_bytes, message_count, memory_size FROM memory ORDER BY name').map(({ id, ...mem }) => ({
    ...mem,
    messages: all(db, `SELECT m.message_type, m.content, m.status, s.content AS source FROM memory_message m
      LEFT JOIN memory_message s ON s.id = m.source_id WHERE m.memory_id = ? ORDER BY m.id`, id),
    tasks: all(db, `SELECT t.status, m.content AS message FROM memory_task t LEFT JOIN memory_message m ON m.id = t.message_id
      WHERE t.memory_id = ? ORDER BY t.id`, id),
  }));
  const agents = all(db, 'SELECT id, title, dsl, release FROM agent ORDER BY title').map(({ id, ...a }) => ({
    ...a,
    versions: all(db, 'SELECT dsl, release FROM agent_version WHERE agent_id = ? ORDER BY create_time, rowid', id),
    sessions: all(db, 'SELECT id, name, round, dsl FROM agent_session WHERE agent_id = ?', id)
      .map((s) => ({
        // The canvas history's turns (role and text; the outputs' timings are the run's own).
        name: s.name, round: s.round, history: ((parse(s.dsl) as { history?: unknown[] } | null)?.history ?? [])
          .map((h) => (Array.isArray(h) ? [h[0], typeof h[1] === 'string' ? h[1] : (h[1] as { content?: unknown } | null)?.content] : h)),
        messages: all(db, 'SELECT role, content FROM agent_message WHERE session_id = ? ORDER BY seq', s.id),
      }))
      .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
  }));
  return {
    version: db.pragma('user_version', { simple: true }),
    datasets,
    blobs: pluck(db, 'SELECT sha256 FROM blob ORDER BY sha256'),
    chats,
    memories,
    agents,
    tokens: all(db, 'SELECT token_sha256, source FROM api_token ORDER BY token_sha256'),
  };
}
