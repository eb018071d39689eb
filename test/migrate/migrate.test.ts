/**
 * Migration end to end between two ragloom servers on loopback, and between a server and a
 * database file: export (every edge case of the manifest), import (reuse, re-run, interruption),
 * verify, rollback; the key never reaches the manifest; the source is never written.
 */
import { describe, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client, type DataSet } from '../../src/index.js';
import { migrateExport, migrateImport, migrateRollback, migrateVerify, readManifest, MigrationError } from '../../src/migrate/index.js';
import { test, remote, enc, createUser, addMember, type Srv } from './fixtures.js';

const TEXT = (topic: string) => `${topic}\n\nThe ${topic} section explains how the ${topic} subsystem is installed, checked and serviced.\n`;

/** A source with the edge cases: a case-only duplicate name, an empty file, a disabled document, one without a stored file, a document-level chunk method. */
async function seedSource(src: Srv): Promise<{ manuals: DataSet; notes: DataSet }> {
  const c = remote(src);
  try {
    const manuals = await c.createDataset({ name: 'Manuals', description: 'Service manuals', permission: 'team', parser_config: { chunk_token_num: 256 } });
    await manuals.update({ pagerank: 7 });
    const docs = await manuals.uploadDocuments([
      { display_name: 'a.txt', blob: enc(TEXT('pump')) },
      { display_name: 'b.md', blob: enc(`# Valves\n\n${TEXT('valve')}`) },
      { display_name: 'empty.pdf', blob: new Uint8Array(0) },
      { display_name: 'c.txt', blob: enc(TEXT('boiler')) },
      { display_name: 'd.txt', blob: enc(TEXT('disabled')) },
      { display_name: 'e.txt', blob: enc(TEXT('unstored')) },
      { display_name: 'f.txt', blob: enc(TEXT('whole file')) },
    ]);
    const byName = new Map(docs.map((d) => [d.name, d]));
    await byName.get('c.txt')!.update({ name: 'A.TXT' }); // RAGFlow allows a case-only twin of a.txt
    await byName.get('d.txt')!.update({ enabled: 0 });
    await byName.get('f.txt')!.update({ chunk_method: 'one' });
    const notes = await c.createDataset({ name: 'Notes', chunk_method: 'one' });
    await notes.uploadDocuments([1, 2, 3].map((i) => ({ display_name: `note${i}.txt`, blob: enc(TEXT(`note ${i}`)) })));
    return { manuals, notes };
  } finally {
    await c.close();
  }
}

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

describe('migrate between two ragloom servers', () => {
  test('export → import → verify carries settings and files; every manifest edge case; re-run adds nothing; rollback', async ({ dir, serve }) => {
    const src = await serve('src');
    const { manuals } = await seedSource(src);
    // A document whose stored file is gone (RAGFlow: an empty location).
    const db = new Database(join(dir, 'src.db'));
    db.prepare("UPDATE document SET location = '' WHERE name = 'e.txt'").run();
    db.close();

    const out = join(dir, 'export');
    const logs: string[] = [];
    const ex = await migrateExport({ from: src.url, apiKey: src.apiKey, out, log: (l, m) => logs.push(`${l}: ${m}`) });
    expect(ex).toMatchObject({ datasets: 2, files: 8, skipped: 2, dry_run: false });
    const m = readManifest(ex.manifest);
    const man = m.entries.find((e) => e.kb_name === 'Manuals')!;
    expect(man).toMatchObject({ kb_id: manuals.id, kb_description: 'Service manuals', permission: 'team', chunk_method: 'naive', pagerank: 7, folder: `Manuals_${manuals.id.slice(0, 8)}` });
    expect(man.parser_config).toMatchObject({ chunk_token_num: 256 });
    expect(man.files.map((f) => f.name).sort()).toEqual(['A_1.TXT', 'a.txt', 'b.md', 'empty.pdf', 'f.txt']);
    expect(man.files.find((f) => f.name === 'A_1.TXT')).toMatchObject({ source_name: 'A.TXT', local_path: `${man.folder}/A_1.TXT` });
    expect(man.files.find((f) => f.name === 'f.txt')!.chunk_method).toBe('one');
    expect(man.skipped.map((s) => s.name).sort()).toEqual(['d.txt', 'e.txt']);
    expect(logs.some((l) => /warn: Manuals: e\.txt: skipped: the document has an empty location/.test(l))).toBe(true);
    expect(readFileSync(join(out, man.folder, 'A_1.TXT'), 'utf8')).toBe(TEXT('boiler'));
    expect(statSync(join(out, man.folder, 'empty.pdf')).size).toBe(0);
    expect(readFileSync(ex.manifest, 'utf8')).not.toContain(src.apiKey);

    // The target already holds a dataset named "notes" (any case) with a document of its own: reused, not duplicated.
    const dst = await serve('dst');
    const d0 = remote(dst);
    const ownNotes = await d0.createDataset({ name: 'notes', chunk_method: 'one' });
    const [own] = await ownNotes.uploadDocuments([{ display_name: 'mine.txt', blob: enc(TEXT('mine')) }]);

    const warned: string[] = [];
    const im = await migrateImport({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, batchSize: 3, log: (_l, msg) => warned.push(msg) });
    // A stored parser_config holds keys create refuses (as in RAGFlow): those, and only those, are dropped.
    expect(warned).toEqual([expect.stringMatching(/^Manuals: the target does not take parser_config graphrag\.retry_attempts, .* \(Extra inputs are not permitted\); created without them$/)]);
    expect(im).toMatchObject({ datasets_created: 1, datasets_reused: 1, uploaded: 8, already_present: 0, failed: 0, parse_started: 8 });
    // An empty PDF cannot be parsed (FAIL): 1 of 8, over the 5% limit.
    const report = await migrateVerify({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, waitSeconds: 120 });
    expect(report.problems).toEqual(['Manuals: 20.0% of documents failed to parse (limit 5%)', '12.5% of all documents failed to parse (limit 5%)']);
    expect(report).toMatchObject({ ok: false, datasets: { expected: 2, found: 2 }, documents: { expected: 8, found: 8 }, runs: { DONE: 7, FAIL: 1, pending: 0 } });
    expect(report.rows.find((r) => r.kb_name === 'Manuals')!.runs).toEqual({ DONE: 4, FAIL: 1, pending: 0 });
    expect((await migrateVerify({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, maxFailureRate: 0.25 })).ok).toBe(true);
    expect(report.flags).toContain('Notes: 1 document(s) in the target dataset are not in the manifest');

    const [tm] = await d0.listDatasets({ name: 'Manuals' });
    expect(tm).toMatchObject({ description: 'Service manuals', permission: 'team', chunk_method: 'naive', pagerank: 7 });
    expect((tm!.parser_config as Record<string, unknown>).chunk_token_num).toBe(256);
    const tdocs = await tm!.listDocuments({ page_size: 100 });
    expect(tdocs.find((d) => d.name === 'f.txt')!.chunk_method).toBe('one');
    expect(Buffer.from(await tdocs.find((d) => d.name === 'A_1.TXT')!.download()).toString()).toBe(TEXT('boiler'));

    // Re-running uploads nothing.
    const again = await migrateImport({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey });
    expect(again).toMatchObject({ uploaded: 0, already_present: 8, datasets_created: 0, datasets_reused: 2 });
    expect((await tm!.listDocuments({ page_size: 100 })).length).toBe(5);
    expect(readFileSync(ex.manifest, 'utf8')).not.toContain(dst.apiKey);

    // Rollback: the created dataset goes, the reused one keeps its own document, the export folder goes; the source is as it was.
    const srcBefore = await snapshot(src);
    const rb = await migrateRollback({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey });
    expect(rb).toMatchObject({ datasets_deleted: 1, documents_deleted: 3, export_removed: true });
    expect((await d0.listDatasets()).map((d) => d.name)).toEqual(['notes']);
    expect((await ownNotes.listDocuments()).map((d) => d.id)).toEqual([own!.id]);
    expect(existsSync(out)).toBe(false);
    expect(await snapshot(src)).toEqual(srcBefore);
    await d0.close();
  });

  test('an interrupted import resumes without duplicates, and an interrupted one rolls back', async ({ dir, serve }) => {
    const src = await serve('src');
    await seedSource(src);
    const out = join(dir, 'export');
    const ex = await migrateExport({ from: src.url, apiKey: src.apiKey, out });
    const dst = await serve('dst');
    // Interrupted after its first batch (the process dies there; a throw from the hook stands in for it).
    let batches = 0;
    await expect(migrateImport({
      manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, batchSize: 2,
      onProgress: (p) => {
        if (p.step === 'import' && ++batches === 2) throw new Error('killed');
      },
    })).rejects.toThrow('killed');
    const rec = Object.values(readManifest(ex.manifest).imports)[0]!;
    expect(Object.values(rec.datasets)[0]!.created).toBe(true); // recorded before its files went in
    expect(rec.finished_at).toBeNull();

    const resumed = await migrateImport({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, batchSize: 2 });
    expect(resumed.already_present).toBe(2);
    expect(resumed.uploaded).toBe(7);
    const c = remote(dst);
    const names = (await Promise.all((await c.listDatasets()).map((d) => d.listDocuments({ page_size: 100 })))).flat().map((d) => d.name);
    expect(names.sort()).toEqual(['A_1.TXT', 'a.txt', 'b.md', 'e.txt', 'empty.pdf', 'f.txt', 'note1.txt', 'note2.txt', 'note3.txt']);
    expect((await migrateVerify({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, waitSeconds: 120, maxFailureRate: 0.25 })).documents).toEqual({ expected: 9, found: 9 });

    // Rollback with --keep-export, twice (the second finds it done).
    const rb = await migrateRollback({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, keepExport: true });
    expect(rb.datasets_deleted).toBe(2);
    expect(await c.listDatasets()).toEqual([]);
    expect(existsSync(ex.manifest)).toBe(true);
    expect((await migrateRollback({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, keepExport: true })).datasets_deleted).toBe(0);
    // And a fresh import after the rollback starts over.
    expect((await migrateImport({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey })).datasets_created).toBe(2);
    await c.close();
  });

  test('duplicate dataset names (another tenant\'s team dataset) get their own folders and stay two datasets; a dataset whose documents cannot be listed is logged and the run goes on', async ({ dir, serve }) => {
    const src = await serve('src');
    const owner = await createUser(src, 'owner');
    const member = await createUser(src, 'member');
    await addMember(src, owner.api_key, owner.tenant_id, member.id);
    const theirs = await remote(src, owner.api_key).createDataset({ name: 'docs', permission: 'team' });
    await theirs.uploadDocuments([{ display_name: 'theirs.txt', blob: enc(TEXT('theirs')) }]);
    const mine = await remote(src, member.api_key).createDataset({ name: 'docs' });
    await mine.uploadDocuments([{ display_name: 'mine.txt', blob: enc(TEXT('mine')) }]);

    const warnings: string[] = [];
    const ex = await migrateExport({ from: src.url, apiKey: member.api_key, out: join(dir, 'x'), log: (l, msg) => l === 'warn' && warnings.push(msg) });
    const m = readManifest(ex.manifest);
    expect(m.entries.map((e) => e.folder).sort()).toEqual([`docs_${mine.id.slice(0, 8)}`, `docs_${theirs.id.slice(0, 8)}`].sort());
    // Visible to a member, but its documents are the owner tenant's: logged, the rest exported.
    expect(warnings.some((w) => /^docs: its documents cannot be listed \(You don't own the dataset/.test(w))).toBe(true);
    expect(ex.files).toBe(1);

    const dst = await serve('dst');
    const im = await migrateImport({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey });
    expect(im.datasets_created).toBe(2);
    const c = remote(dst);
    expect((await c.listDatasets()).map((d) => d.name).sort()).toEqual(['docs', 'docs(1)']);
    expect((await migrateVerify({ manifest: ex.manifest, to: dst.url, apiKey: dst.apiKey, waitSeconds: 60 })).ok).toBe(true);
    await c.close();
  });

  test('a source that goes away mid-export: each failed download is logged, the rest of the run goes on, a re-run fetches only the rest', async ({ dir, serve }) => {
    const src = await serve('src');
    await seedSource(src);
    const out = join(dir, 'x');
    const warnings: string[] = [];
    let n = 0;
    const ex = await migrateExport({
      from: src.url, apiKey: src.apiKey, out, log: (_l, m) => warnings.push(m),
      onProgress: () => {
        if (++n === 3) void src.close(); // the server stops after the third document
      },
    });
    const failed = warnings.filter((w) => /: download failed: Connection error/.test(w));
    expect(failed.length).toBeGreaterThan(0);
    expect(ex.files + failed.length).toBe(9);
    expect(readManifest(ex.manifest).entries.flatMap((e) => e.skipped).filter((s) => /^download failed/.test(s.reason))).toHaveLength(failed.length);
    const back = await serve('src');
    const again = await migrateExport({ from: back.url, apiKey: back.apiKey, out });
    expect(again).toMatchObject({ files: 9, reused: ex.files, skipped: 1 }); // the disabled document
  });
});

describe('migrate between a server and a database file', () => {
  test('a database file exports read-only (not a byte changes) and imports into a new file', async ({ dir, serve }) => {
    const src = await serve('src');
    await seedSource(src);
    await src.close();
    const file = join(dir, 'src.db');
    // Checkpointed and closed: the file itself is what must not change.
    const before = sha(file);
    const mtime = statSync(file).mtimeMs;
    const ex = await migrateExport({ from: file, out: join(dir, 'x') });
    expect(ex.files).toBe(9);
    expect(sha(file)).toBe(before);
    expect(statSync(file).mtimeMs).toBe(mtime);
    // A read-only reader of a WAL file may leave SQLite's (empty) -wal and -shm beside it; never data.
    expect(readdirSync(dir).filter((f) => f.startsWith('src.db-wal')).map((f) => statSync(join(dir, f)).size)).toEqual(readdirSync(dir).includes('src.db-wal') ? [0] : []);

    const target = join(dir, 'dst.db');
    expect((await migrateImport({ manifest: ex.manifest, to: target })).uploaded).toBe(9);
    const r = await migrateVerify({ manifest: ex.manifest, to: target, waitSeconds: 120, maxFailureRate: 0.25 });
    expect(r.ok).toBe(true);
    // A file target back to a server.
    const ex2 = await migrateExport({ from: target, out: join(dir, 'y') });
    const dst = await serve('dst');
    await migrateImport({ manifest: ex2.manifest, to: dst.url, apiKey: dst.apiKey });
    expect((await migrateVerify({ manifest: ex2.manifest, to: dst.url, apiKey: dst.apiKey, waitSeconds: 120 })).documents).toEqual({ expected: 9, found: 9 });
  });

  test('verify fails on missing documents and on a failure rate above 5%, and flags chunk-count outliers', async ({ dir }) => {
    const file = join(dir, 'src.db');
    const c = new Client({ path: file });
    const ds = await c.createDataset({ name: 'mixed' });
    const long = Array.from({ length: 60 }, (_, i) => `Paragraph ${i}: ${TEXT(`part ${i}`).repeat(8)}`).join('\n\n');
    await ds.uploadDocuments([
      ...Array.from({ length: 8 }, (_, i) => ({ display_name: `short${i}.txt`, blob: enc(TEXT(`short ${i}`)) })),
      { display_name: 'long.txt', blob: enc(long) },
      { display_name: 'broken.pdf', blob: enc('%PDF-1.7 this is not a PDF') },
    ]);
    await c.close();
    const ex = await migrateExport({ from: file, out: join(dir, 'x') });
    const target = join(dir, 'dst.db');
    await migrateImport({ manifest: ex.manifest, to: target });
    const r = await migrateVerify({ manifest: ex.manifest, to: target, waitSeconds: 120 });
    expect(r.ok).toBe(false);
    expect(r.runs).toEqual({ DONE: 9, FAIL: 1, pending: 0 });
    expect(r.problems).toContain('mixed: 10.0% of documents failed to parse (limit 5%)');
    expect(r.flags.some((f) => /^mixed: long\.txt has \d+ chunks, over 3× the dataset's average/.test(f))).toBe(true);
    expect((await migrateVerify({ manifest: ex.manifest, to: target, maxFailureRate: 0.2 })).ok).toBe(true);

    // A document removed from the target: missing.
    const t = new Client({ path: target });
    const [tds] = await t.listDatasets();
    const [gone] = await tds!.listDocuments({ name: 'short3.txt' });
    await tds!.deleteDocuments({ ids: [gone!.id] });
    await t.close();
    const r2 = await migrateVerify({ manifest: ex.manifest, to: target, maxFailureRate: 0.2 });
    expect(r2.ok).toBe(false);
    expect(r2.problems).toEqual(['mixed: 1 of 10 documents missing (short3.txt)']);
  });

  test('bad input: missing or incomplete manifests, a missing source file, a URL without a key, a dry run changes nothing', async ({ dir, serve }) => {
    await expect(migrateImport({ manifest: join(dir, 'nope.json'), to: join(dir, 't.db') })).rejects.toThrow(/Cannot read the manifest .*nope\.json: ENOENT/);
    writeFileSync(join(dir, 'bad.json'), '{"entries": 3}');
    await expect(migrateImport({ manifest: join(dir, 'bad.json'), to: join(dir, 't.db') })).rejects.toThrow(MigrationError);
    writeFileSync(join(dir, 'partial.json'), JSON.stringify({ complete: false, entries: [] }));
    await expect(migrateImport({ manifest: join(dir, 'partial.json'), to: join(dir, 't.db') })).rejects.toThrow(/did not finish/);
    await expect(migrateExport({ from: join(dir, 'missing.db'), out: join(dir, 'x') })).rejects.toThrow(/No database file at/);
    expect(existsSync(join(dir, 'missing.db'))).toBe(false);
    const src = await serve('src');
    const env = { a: process.env.RAGFLOW_API_KEY, b: process.env.RAGLOOM_API_KEY };
    delete process.env.RAGFLOW_API_KEY;
    delete process.env.RAGLOOM_API_KEY;
    try {
      await expect(migrateExport({ from: src.url, out: join(dir, 'x') })).rejects.toThrow(/needs an API key: pass --api-key or set RAGFLOW_API_KEY/);
      process.env.RAGFLOW_API_KEY = src.apiKey;
      await seedSource(src);
      const dry = await migrateExport({ from: src.url, out: join(dir, 'x'), dryRun: true });
      expect(dry).toMatchObject({ dry_run: true, datasets: 2, files: 9 });
      expect(existsSync(join(dir, 'x'))).toBe(false);
    } finally {
      for (const [k, v] of [['RAGFLOW_API_KEY', env.a], ['RAGLOOM_API_KEY', env.b]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    const ex = await migrateExport({ from: src.url, apiKey: src.apiKey, out: join(dir, 'x') });
    const target = join(dir, 't.db');
    const plan = await migrateImport({ manifest: ex.manifest, to: target, dryRun: true });
    expect(plan.plan.map((p) => [p.kb_name, p.action, p.upload])).toEqual([['Manuals', 'create', 6], ['Notes', 'create', 3]]);
    expect(readManifest(ex.manifest).imports).toEqual({});
    await expect(migrateVerify({ manifest: ex.manifest, to: join(dir, 'other.db') })).rejects.toThrow(/No database file at/);
    await expect(migrateRollback({ manifest: ex.manifest, to: target })).rejects.toThrow(/records no import into/);
  });
});

/** Everything a user sees of a server's datasets and documents. */
async function snapshot(s: Srv): Promise<unknown> {
  const c = remote(s);
  try {
    const out: unknown[] = [];
    for (const d of await c.listDatasets({ orderby: 'create_time', desc: false })) {
      const docs = await d.listDocuments({ page_size: 100, orderby: 'create_time', desc: false });
      out.push({ ...d.toJSON(), docs: docs.map((x) => x.toJSON()) });
    }
    return out;
  } finally {
    await c.close();
  }
}
