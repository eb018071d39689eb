import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { openDatabase, upsertChunk, sqliteSearch, type Db } from '../../src/store/index.js';
import { ftsTerms } from '../../src/text/index.js';
import { StaticEmbedder } from '../../src/embed/index.js';
import { resolveBuiltinModelPath } from '../../src/embed/builtin-models.js';
import {
  searchMemoryMessages, memoryVectorIndex, vectorIndex, vectorSearchOptions, forgetVectorIndexes, textQuery, textScores, textSide,
  ALL_MATCHES_BELOW, type MemorySearchRequest, type MemoryHit,
} from '../../src/search/index.js';
import { CodeStore } from '../../src/search/hamming.js';
import { syntheticChunks } from '../../bench/lib/chunks.js';

// searchMemoryMessages (src/search/memory.ts) over a real database: messages and their
// memory_fts rows written with SQL as the memory store writes them, vectors from the built-in
// static model.

const DIM = 256;
let emb: StaticEmbedder;
let dir: string;
beforeAll(() => {
  emb = new StaticEmbedder({ id: 'ragloom-static-en-256@Builtin', path: resolveBuiltinModelPath('ragloom-static-en-256'), dim: DIM });
  dir = mkdtempSync(join(tmpdir(), 'ragloom-memsearch-'));
});
afterAll(async () => {
  await emb.close?.();
  rmSync(dir, { recursive: true, force: true });
});

let dbCount = 0;
function freshDb(): Db {
  const db = openDatabase(join(dir, `m${dbCount++}.db`));
  db.exec(`INSERT INTO tenant (id, name, embd_id, create_time) VALUES ('t', 't', 'ragloom-static-en-256@Builtin', 0)`);
  return db;
}

function addMemory(db: Db, id: string): void {
  db.prepare(`INSERT INTO memory (id, tenant_id, name, embd_id, llm_id, created_by, create_time, update_time)
    VALUES (?, 't', ?, 'ragloom-static-en-256@Builtin', 'llm', 'u', 0, 0)`).run(id, id);
}

interface Msg { content: string; agent?: string; session?: string; user?: string }

/** Inserts messages (one transaction): row, then its full-text row (rowid = message id). Returns the ids. */
async function addMessages(db: Db, memoryId: string, msgs: Msg[]): Promise<number[]> {
  const vecs = await emb.embed(msgs.map((m) => m.content));
  const ins = db.prepare(`INSERT INTO memory_message (memory_id, message_type, user_id, agent_id, session_id, content, dim, vector,
    valid_at, fifo_at, size, create_time) VALUES (?, 'raw', ?, ?, ?, ?, ?, ?, 0, 0, 0, 0)`);
  const fts = db.prepare('INSERT INTO memory_fts (rowid, title, content, keywords, questions) VALUES (?, ?, ?, ?, ?)');
  const ids: number[] = [];
  db.transaction(() => {
    msgs.forEach((m, i) => {
      const v = vecs[i]!;
      const empty = m.content.trim() === '';
      const blob = empty ? null : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
      const id = Number(ins.run(memoryId, m.user ?? '', m.agent ?? '', m.session ?? '', m.content, empty ? 0 : DIM, blob).lastInsertRowid);
      fts.run(BigInt(id), ...ftsTerms('', m.content, [], []));
      ids.push(id);
    });
  })();
  return ids;
}

function removeMessage(db: Db, id: number): void {
  db.transaction(() => {
    db.prepare('DELETE FROM memory_message WHERE id = ?').run(id);
    db.prepare('DELETE FROM memory_fts WHERE rowid = ?').run(BigInt(id));
  })();
}

async function search(db: Db, memoryIds: string[], question: string, opts: Partial<MemorySearchRequest> = {}): Promise<MemoryHit[]> {
  const [qv] = await emb.embed([question]);
  return searchMemoryMessages(sqliteSearch(db), { memoryIds, question, questionVector: qv!, dim: DIM, threshold: 0, vectorWeight: 0.7, topN: 100, ...opts });
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

const NOTES: Msg[] = [
  { content: 'User Input: my cat is called Miso\nAgent Response: Miso is a lovely name for a cat', agent: 'a1', session: 's1', user: 'u1' },
  { content: 'User Input: I am allergic to peanuts\nAgent Response: noted, no peanut recipes', agent: 'a1', session: 's1', user: 'u1' },
  { content: 'User Input: book a table for two on Friday\nAgent Response: booked at the Italian place', agent: 'a1', session: 's2', user: 'u1' },
  { content: 'User Input: what is the weather in Paris\nAgent Response: sunny and mild', agent: 'a2', session: 's3', user: 'u2' },
  { content: 'The user owns a grey kitten and a dog', agent: 'a2', session: 's3', user: 'u2' },
  { content: 'The user prefers vegetarian food and dislikes peanuts', agent: 'a1', session: 's1', user: 'u1' },
  { content: 'Steps to reset the router: unplug it, wait ten seconds, plug it back', agent: 'a1', session: 's4', user: 'u3' },
  { content: 'Pets: cat named Miso, adopted last spring', agent: 'a2', session: 's5', user: 'u2' },
  { content: 'The restaurant booking on Friday is for two people', agent: 'a2', session: 's2', user: 'u1' },
  { content: 'Feline companions need regular veterinary checkups', agent: 'a3', session: 's6', user: 'u3' },
  { content: '', agent: 'a1', session: 's1', user: 'u1' },
];

/** Every searchable message of the memories scored independently: cosine from the vectors, term from FTS5 bm25(). */
async function bruteForce(db: Db, memoryIds: string[], question: string, w: number) {
  const [qv] = await emb.embed([question]);
  const rows = db.prepare(`SELECT id, vector FROM memory_message WHERE status = 1 AND forget_at IS NULL AND dim = ${DIM}
    AND memory_id IN (${memoryIds.map(() => '?').join(',')})`).all(...memoryIds) as { id: number; vector: Buffer }[];
  const tq = textQuery(sqliteSearch(db), question, { table: 'memory_fts' });
  const ts = textScores(sqliteSearch(db), tq, rows.map((r) => r.id));
  return rows.map((r) => {
    const v = new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength));
    const vsim = Math.max(0, Math.min(1, dot(qv!, v)));
    const tsim = ts.get(r.id) ?? 0;
    return { id: r.id, vsim, tsim, sim: w * vsim + (1 - w) * tsim };
  });
}

describe('searchMemoryMessages', () => {
  test('ranks by w·cosine + (1 − w)·term_similarity, term_similarity normalised as for chunks', async () => {
    const db = freshDb();
    try {
      addMemory(db, 'm1');
      await addMessages(db, 'm1', NOTES);
      for (const question of ['what is my cat called', 'peanut allergy', 'Friday restaurant booking for two']) {
        const hits = await search(db, ['m1'], question);
        const want = (await bruteForce(db, ['m1'], question, 0.7)).sort((a, b) => b.sim - a.sim || b.tsim - a.tsim || b.id - a.id);
        expect(hits.map((h) => h.id)).toEqual(want.map((c) => c.id));
        for (const [i, h] of hits.entries()) {
          expect(h.vector_similarity).toBeCloseTo(want[i]!.vsim, 5);
          expect(h.term_similarity).toBeCloseTo(want[i]!.tsim, 9);
          expect(h.similarity).toBeCloseTo(0.7 * h.vector_similarity + 0.3 * h.term_similarity, 12);
          if (i) expect(h.similarity).toBeLessThanOrEqual(hits[i - 1]!.similarity);
        }
        expect(hits.some((h) => h.term_similarity > 0 && h.term_similarity <= 1)).toBe(true);
      }
      // The empty message (no vector, no terms) is never found, and does not break anything.
      const empty = db.prepare("SELECT id FROM memory_message WHERE content = ''").pluck().get() as number;
      expect((await search(db, ['m1'], 'anything at all')).map((h) => h.id)).not.toContain(empty);
    } finally {
      db.close();
    }
  });

  test('a store without a full-text engine is refused with a clear error, with and without a question vector', async () => {
    const db = freshDb();
    try {
      addMemory(db, 'm1');
      await addMessages(db, 'm1', NOTES.slice(0, 3));
      const reader = sqliteSearch(db);
      const bare = Object.create(reader, { fullText: { value: undefined } }) as typeof reader;
      const [qv] = await emb.embed(['cat']);
      for (const [questionVector, dim] of [[qv!, DIM], [null, 0]] as const) {
        await expect(searchMemoryMessages(bare, { memoryIds: ['m1'], question: 'cat', questionVector, dim, threshold: 0, vectorWeight: 0.7, topN: 5 }))
          .rejects.toThrow('This store has no full-text engine');
      }
      // The same reader with its engine finds the message.
      expect((await searchMemoryMessages(reader, { memoryIds: ['m1'], question: 'cat', questionVector: null, dim: 0, threshold: 0, vectorWeight: 0.7, topN: 5 })).length).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });

  test('the weight is the VECTOR side: w = 1 gives cosine order, w = 0 term order', async () => {
    const db = freshDb();
    try {
      addMemory(db, 'm1');
      await addMessages(db, 'm1', NOTES);
      const question = 'cat named Miso';
      const bf = await bruteForce(db, ['m1'], question, 0.5);
      const byVec = await search(db, ['m1'], question, { vectorWeight: 1 });
      const vecOrder = [...bf].sort((a, b) => b.vsim - a.vsim || b.tsim - a.tsim || b.id - a.id).map((c) => c.id);
      expect(byVec.map((h) => h.id)).toEqual(vecOrder);
      for (const h of byVec) expect(h.similarity).toBeCloseTo(h.vector_similarity, 12);
      const byText = await search(db, ['m1'], question, { vectorWeight: 0, threshold: 1e-9 });
      const textOrder = bf.filter((c) => c.tsim > 0).sort((a, b) => b.tsim - a.tsim || b.id - a.id).map((c) => c.id);
      expect(textOrder.length).toBeGreaterThan(1);
      expect(byText.map((h) => h.id)).toEqual(textOrder);
      for (const h of byText) expect(h.similarity).toBeCloseTo(h.term_similarity, 12);
      // The two orders differ on this corpus (else the test proves nothing).
      expect(byVec.slice(0, textOrder.length).map((h) => h.id)).not.toEqual(textOrder);
    } finally {
      db.close();
    }
  });

  test('threshold on similarity, and topN', async () => {
    const db = freshDb();
    try {
      addMemory(db, 'm1');
      await addMessages(db, 'm1', NOTES);
      const question = 'peanut allergy';
      const all = await search(db, ['m1'], question);
      expect(all.length).toBeGreaterThan(4);
      const thr = (all[2]!.similarity + all[3]!.similarity) / 2;
      const cut = await search(db, ['m1'], question, { threshold: thr });
      expect(cut).toEqual(all.slice(0, 3));
      expect(await search(db, ['m1'], question, { threshold: 1.01 })).toEqual([]);
      expect(await search(db, ['m1'], question, { topN: 2 })).toEqual(all.slice(0, 2));
      expect(await search(db, ['m1'], question, { topN: 0 })).toEqual([]);
      // RAGFlow's defaults: threshold 0.2, vector weight 0.7, top 5.
      const dflt = await search(db, ['m1'], question, { threshold: 0.2, topN: 5 });
      expect(dflt.length).toBeLessThanOrEqual(5);
      expect(dflt.every((h) => h.similarity >= 0.2)).toBe(true);
      expect(dflt).toEqual(all.filter((h) => h.similarity >= 0.2).slice(0, 5));
    } finally {
      db.close();
    }
  });

  test('forgotten, disabled and deleted messages are not found; re-enabled ones are again (the index follows the log)', async () => {
    const db = freshDb();
    try {
      addMemory(db, 'm1');
      const ids = await addMessages(db, 'm1', NOTES);
      const question = 'what is my cat called';
      const first = (await search(db, ['m1'], question))[0]!.id;
      expect(first).toBe(ids[0]);
      const found = async () => (await search(db, ['m1'], question)).map((h) => h.id);
      db.prepare('UPDATE memory_message SET forget_at = 1 WHERE id = ?').run(first);
      expect(await found()).not.toContain(first);
      // Text-only searches (no question vector) apply the same rules.
      const textOnly = () => searchMemoryMessages(sqliteSearch(db), { memoryIds: ['m1'], question, questionVector: null, dim: 0, threshold: 0, vectorWeight: 0.7, topN: 10 });
      expect((await textOnly()).map((h) => h.id)).not.toContain(first);
      db.prepare('UPDATE memory_message SET forget_at = NULL WHERE id = ?').run(first);
      expect((await found())[0]).toBe(first);
      expect((await textOnly()).map((h) => h.id)).toContain(first);
      db.prepare('UPDATE memory_message SET status = 0 WHERE id = ?').run(first);
      expect(await found()).not.toContain(first);
      expect((await textOnly()).map((h) => h.id)).not.toContain(first);
      db.prepare('UPDATE memory_message SET status = 1 WHERE id = ?').run(first);
      expect((await found())[0]).toBe(first);
      // After a rebuild from the tables the same.
      db.prepare('UPDATE memory_message SET status = 0 WHERE id = ?').run(ids[7]);
      const before = await search(db, ['m1'], question);
      forgetVectorIndexes(sqliteSearch(db));
      expect(await search(db, ['m1'], question)).toEqual(before);
      expect(before.map((h) => h.id)).not.toContain(ids[7]);
      removeMessage(db, first);
      expect(await found()).not.toContain(first);
      // A message added after the index was built is found (inserts: ids past the highest applied).
      const [added] = await addMessages(db, 'm1', [{ content: 'my cat is called Miso, and Miso is my cat' }]);
      expect((await found())[0]).toBe(added);
      expect((await memoryVectorIndex(sqliteSearch(db), DIM)).size).toBe(ids.length - 1); // minus the empty message and the deleted one, plus the added one
      expect((await memoryVectorIndex(sqliteSearch(db), DIM)).cosine(new Float32Array(DIM), first)).toBeUndefined();
    } finally {
      db.close();
    }
  });

  test('filters by agent, session and user; memories are separate partitions', async () => {
    const db = freshDb();
    try {
      addMemory(db, 'm1');
      addMemory(db, 'm2');
      const ids1 = await addMessages(db, 'm1', NOTES);
      const ids2 = await addMessages(db, 'm2', NOTES);
      const meta = new Map<number, Msg>([...ids1.map((id, i): [number, Msg] => [id, NOTES[i]!]), ...ids2.map((id, i): [number, Msg] => [id, NOTES[i]!])]);
      const question = 'cat named Miso and peanuts';
      const m1 = await search(db, ['m1'], question);
      const m2 = await search(db, ['m2'], question);
      expect(m1.length).toBeGreaterThan(3);
      expect(m1.every((h) => ids1.includes(h.id))).toBe(true);
      expect(m2.every((h) => ids2.includes(h.id))).toBe(true);
      // Same texts, same scores: only the partition differs.
      expect(m2.map((h) => h.similarity)).toEqual(m1.map((h) => h.similarity));
      const both = await search(db, ['m1', 'm2'], question);
      expect(new Set(both.map((h) => h.id))).toEqual(new Set([...m1, ...m2].map((h) => h.id)));
      expect(await search(db, ['nope'], question)).toEqual([]);

      // Text-only searches (no question vector: rows checked in SQL) filter the same way.
      const textOnly = (f: Partial<MemorySearchRequest> = {}) =>
        searchMemoryMessages(sqliteSearch(db), { memoryIds: ['m1', 'm2'], question, questionVector: null, dim: 0, threshold: 0, vectorWeight: 0, topN: 100, ...f });
      const textAll = await textOnly();
      expect(textAll.length).toBeGreaterThan(3);
      let textFiltered = 0;
      for (const [key, field, value] of [['agentId', 'agent', 'a1'], ['sessionId', 'session', 's3'], ['userId', 'user', 'u2']] as const) {
        const hits = await search(db, ['m1', 'm2'], question, { [key]: value });
        const want = both.filter((h) => meta.get(h.id)![field] === value);
        expect(want.length).toBeGreaterThan(0);
        expect(hits).toEqual(want);
        const t = await textOnly({ [key]: value });
        expect(t).toEqual(textAll.filter((h) => meta.get(h.id)![field] === value));
        textFiltered += t.length;
      }
      expect(textFiltered).toBeGreaterThan(0);
      const combined = await search(db, ['m1', 'm2'], question, { agentId: 'a1', sessionId: 's1', userId: 'u1' });
      expect(combined.length).toBeGreaterThan(0);
      expect(combined.every((h) => { const m = meta.get(h.id)!; return m.agent === 'a1' && m.session === 's1' && m.user === 'u1'; })).toBe(true);
      expect(await search(db, ['m1'], question, { agentId: 'no-such-agent' })).toEqual([]);
      // '' means no filter, as RAGFlow's `if agent_id:`.
      expect(await search(db, ['m1'], question, { agentId: '' })).toEqual(m1);
    } finally {
      db.close();
    }
  });

  test('a memory of more than 4,096 messages goes through the binary codes and finds the exact best message', async () => {
    const db = freshDb();
    const select = vi.spyOn(CodeStore.prototype, 'select');
    const distances = vi.spyOn(CodeStore.prototype, 'distances');
    try {
      expect(vectorSearchOptions.exactBelow).toBe(4096);
      addMemory(db, 'big');
      addMemory(db, 'small');
      const texts = syntheticChunks(5000, 40, 7);
      const ids = await addMessages(db, 'big', texts.map((content, i) => ({ content, agent: i % 2 ? 'odd' : 'even' })));
      await addMessages(db, 'small', NOTES);
      const ix = (await memoryVectorIndex(sqliteSearch(db), DIM));
      expect(ix.size).toBe(5000 + NOTES.length - 1);
      for (const i of [3, 1234, 4999]) {
        // A near-duplicate: the message with two words dropped.
        const words = texts[i]!.split(' ');
        const question = [...words.slice(0, 10), ...words.slice(12)].join(' ');
        const [qv] = await emb.embed([question]);
        const exactBest = ix.search(qv!, 1, { datasets: ['big'] }, { exact: true })[0]!.rowid;
        expect(exactBest).toBe(ids[i]);
        for (const w of [1, 0.7]) {
          // Every partition of the index searched: the binary prefilter's select().
          select.mockClear();
          const hits = await searchMemoryMessages(sqliteSearch(db), { memoryIds: ['big', 'small'], question, questionVector: qv!, dim: DIM, threshold: 0.2, vectorWeight: w, topN: 5 });
          expect(hits[0]!.id).toBe(ids[i]);
          expect(select).toHaveBeenCalled();
          // One of two partitions: the per-slot cut-off over the codes' distances.
          distances.mockClear();
          const one = await searchMemoryMessages(sqliteSearch(db), { memoryIds: ['big'], question, questionVector: qv!, dim: DIM, threshold: 0.2, vectorWeight: w, topN: 5 });
          expect(one[0]!.id).toBe(ids[i]);
          expect(distances).toHaveBeenCalled();
        }
        // A tag filter: the same per-slot cut-off.
        distances.mockClear();
        const tagged = await searchMemoryMessages(sqliteSearch(db), { memoryIds: ['big'], question, questionVector: qv!, dim: DIM, threshold: 0.2, vectorWeight: 1, topN: 5, agentId: i % 2 ? 'odd' : 'even' });
        expect(tagged[0]!.id).toBe(ids[i]);
        expect(distances).toHaveBeenCalled();
        const other = await searchMemoryMessages(sqliteSearch(db), { memoryIds: ['big'], question, questionVector: qv!, dim: DIM, threshold: 0, vectorWeight: 1, topN: 5, agentId: i % 2 ? 'even' : 'odd' });
        expect(other.map((h) => h.id)).not.toContain(ids[i]);
      }
      // The text side: a top-k query, or one pass over every match (filters): the same rows and scores.
      const tq = textQuery(sqliteSearch(db), texts.slice(0, 6).join(' '), { table: 'memory_fts' });
      expect(tq.dfSum).toBeGreaterThan(ALL_MATCHES_BELOW);
      const accept = ix.matcher({ datasets: ['big'] });
      const byScore = (a: [number, number], b: [number, number]) => b[1] - a[1] || a[0] - b[0];
      const topQuery = textSide(sqliteSearch(db), tq, 64, accept);
      const onePass = textSide(sqliteSearch(db), tq, 64, accept, { selective: true });
      onePass.top.sort(byScore);
      topQuery.top.sort(byScore);
      expect(onePass.top.map(([id]) => id)).toEqual(topQuery.top.map(([id]) => id));
      onePass.top.forEach(([, ts], j) => expect(ts).toBeCloseTo(topQuery.top[j]![1], 12));
      const others = ids.slice(0, 50);
      const js = topQuery.scoresOf(others);
      const fts = onePass.scoresOf(others);
      expect([...js.keys()].sort()).toEqual([...fts.keys()].sort());
      for (const [id, ts] of fts) expect(js.get(id)).toBeCloseTo(ts, 9);
      // The small memory beside it is searched exactly within its partition.
      const small = await search(db, ['small'], 'what is my cat called');
      const want = (await bruteForce(db, ['small'], 'what is my cat called', 0.7)).sort((a, b) => b.sim - a.sim || b.tsim - a.tsim || b.id - a.id);
      expect(small.map((h) => h.id)).toEqual(want.map((c) => c.id));
    } finally {
      select.mockRestore();
      distances.mockRestore();
      db.close();
    }
  });

  test('the chunk index and the memory index do not see each other\'s rows', async () => {
    const db = freshDb();
    try {
      addMemory(db, 'm1');
      const ids = await addMessages(db, 'm1', NOTES);
      const question = 'what is my cat called';
      const before = await search(db, ['m1'], question);
      const dfBefore = textQuery(sqliteSearch(db), question, { table: 'memory_fts' }).dfSum;
      // A dataset whose chunks say the same, with vectors of the same dimension (chunk rowids and message ids overlap).
      db.exec(`INSERT INTO dataset (id, tenant_id, name, embd_id, created_by, create_time, update_time) VALUES ('ds', 't', 'n', 'm', 'u', 0, 0);
        INSERT INTO blob (sha256, size, data) VALUES ('s', 0, x'');
        INSERT INTO document (id, dataset_id, name, type, size, blob_sha256, location, parser_id, created_by, create_time, update_time)
          VALUES ('doc', 'ds', 'd.txt', 'doc', 0, 's', 'd.txt', 'naive', 'u', 0, 0);`);
      const chunkTexts = [...NOTES.map((m) => m.content).filter(Boolean), 'my cat is called Miso', 'cat cat cat Miso called'];
      const cv = await emb.embed(chunkTexts);
      db.transaction(() => {
        chunkTexts.forEach((content, i) => upsertChunk(db, { id: `c${i}`, document_id: 'doc', dataset_id: 'ds', content, title: 'd.txt', important_keywords: [],
          questions: [], tag_kwd: [], positions: [], available: true, chunk_order: i, token_num: 10, create_time: '', create_timestamp: 0, vector: cv[i]! }));
      })();
      const chunks = (await vectorIndex(sqliteSearch(db), DIM))!;
      const mem = (await memoryVectorIndex(sqliteSearch(db), DIM));
      expect(chunks.size).toBe(chunkTexts.length);
      expect(mem.size).toBe(ids.length - 1);
      const [qv] = await emb.embed([question]);
      expect(chunks.search(qv!, 50, { datasets: ['m1'] })).toEqual([]);
      expect(mem.search(qv!, 50, { datasets: ['ds'] })).toEqual([]);
      expect(chunks.search(qv!, 50, { datasets: ['ds'] })).toHaveLength(chunkTexts.length);
      expect(mem.search(qv!, 50, { datasets: ['m1'] })).toHaveLength(ids.length - 1);
      // Full text: each side's statistics and rows are its own.
      expect(textQuery(sqliteSearch(db), question, { table: 'memory_fts' }).dfSum).toBe(dfBefore);
      expect(textQuery(sqliteSearch(db), question).dfSum).toBeGreaterThan(dfBefore);
      expect(await search(db, ['m1'], question)).toEqual(before);
      // Disabling a chunk with a message's id leaves the message alone, and the other way round.
      db.prepare('UPDATE chunk SET available = 0 WHERE rowid = ?').run(before[0]!.id);
      expect(await search(db, ['m1'], question)).toEqual(before);
      db.prepare('UPDATE memory_message SET status = 0 WHERE id = ?').run(before[0]!.id);
      expect((await vectorIndex(sqliteSearch(db), DIM))!.size).toBe(chunkTexts.length);
      expect((await vectorIndex(sqliteSearch(db), DIM))!.search(qv!, 50, { datasets: ['ds'] })).toHaveLength(chunkTexts.length - 1);
      expect((await search(db, ['m1'], question)).map((h) => h.id)).not.toContain(before[0]!.id);
    } finally {
      db.close();
    }
  });
});
