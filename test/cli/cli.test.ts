import { describe, expect, vi, afterEach } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { Client } from '../../src/index.js';
import { join } from 'node:path';
import { test } from '../helpers.js';
import { run } from './run.js';

afterEach(() => vi.restoreAllMocks());

function notes(dir: string): string {
  const folder = join(dir, 'notes');
  mkdirSync(join(folder, 'sub'), { recursive: true });
  writeFileSync(join(folder, 'nozzles.md'), '# Nozzles\n\nA convergent-divergent nozzle accelerates gas to supersonic speed.\n');
  writeFileSync(join(folder, 'sub', 'heat.txt'), 'Heat conduction in composite slabs is solved with Laplace transforms.\n');
  writeFileSync(join(folder, 'program.exe'), Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00])); // a PE header's first bytes
  return folder;
}

describe('ragloom CLI', () => {
  test('ingest prints a summary table, skips unsupported files; retrieve ranks chunks with sources', async ({ dir }) => {
    const folder = notes(dir);
    const db = join(dir, 'kb.db');
    const r = await run(['ingest', folder, '--dataset', 'notes', '--db', db]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/nozzles\.md\s+added\s+DONE\s+1/);
    expect(r.out).toMatch(/sub__heat\.txt\s+added\s+DONE\s+1/);
    expect(r.out).toContain('notes: 2 added, 0 updated, 0 unchanged, 0 removed');
    expect(r.out).toContain('2 files, 2 chunks');
    expect(r.out).toContain('skipped (unsupported type): program.exe');
    const q = await run(['retrieve', 'supersonic nozzle', '--dataset', 'notes', '--db', db]);
    expect(q.code).toBe(0);
    const lines = q.out.trim().split('\n');
    expect(lines[0]).toMatch(/#\s+SCORE\s+VECTOR\s+TERM\s+DOCUMENT\s+MATCHING SENTENCE/);
    expect(lines[2]).toContain('nozzles.md');
    // The preview is the sentence that matched, not the chunk's first line ("# Nozzles").
    expect(lines[2]).toContain('A convergent-divergent nozzle accelerates gas to supersonic speed.');
  });

  test('quickstart on a folder: ingests, asks, prints ranked chunks', async ({ dir }) => {
    const folder = notes(dir);
    const r = await run(['quickstart', '--folder', folder, '--question', 'How is heat conduction in slabs solved?', '--db', join(dir, 'q.db')]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Question: How is heat conduction in slabs solved?');
    // The ranked table is the chat's retrieval, numbered as the answer cites it: [ID:n] is row n,
    // with the same score.
    const table = r.out.split('Question:')[1]!.split('Answer (')[0]!;
    expect(table).toMatch(/ID\s+SCORE\s+VECTOR\s+TERM\s+DOCUMENT\s+MATCHING SENTENCE/);
    const rows = new Map([...table.matchAll(/^(\d+)\s+(0\.\d{3})\s+0\.\d{3}\s+0\.\d{3}\s+(\S+)/gm)].map((m) => [m[1]!, { score: m[2]!, doc: m[3]! }]));
    expect(rows.get('0')).toMatchObject({ doc: 'sub__heat.txt' });
    const sources = [...r.out.split('Sources:')[1]!.matchAll(/\[ID:(\d+)\] (\S+) \(similarity (0\.\d{3})\)/g)];
    expect(sources.length).toBeGreaterThan(0);
    for (const [, id, doc, score] of sources) expect(rows.get(id!)).toEqual({ score, doc });
    expect(r.out).toMatch(/Heat conduction in composite slabs is solved with Laplace transforms\. \[ID:0\]/);
  });

  test("quickstart with every default: ragloom's own docs answer its question with the formula, from the top chunk", async ({ dir }) => {
    const r = await run(['quickstart', '--db', join(dir, 'q.db')]);
    expect(r.code).toBe(0);
    const [table, answer] = r.out.split('Question:')[1]!.split('Answer (ragloom-extractive@Builtin):') as [string, string];
    // The answer quotes the formula (the sentence that introduces it brings it) ...
    expect(answer).toMatch(/computes \[ID:\d\]\nsimilarity = w · vector_similarity \+ \(1 − w\) · term_similarity \[ID:\d\]/);
    // ... and only the two documents that rank highest.
    const docs = [...table.matchAll(/^\d+\s+0\.\d{3}\s+0\.\d{3}\s+0\.\d{3}\s+(\S+)/gm)].map((m) => m[1]!);
    const top = [...new Set(docs)].slice(0, 2);
    const cited = [...answer.split('Sources:')[1]!.matchAll(/\[ID:\d+\] (\S+) \(similarity/g)].map((m) => m[1]!);
    expect(cited.length).toBeGreaterThan(0);
    for (const d of cited) expect(top).toContain(d);
  });

  test('quickstart deletes only a database it made: a user\'s database, a text file and a folder are refused unless --force', async ({ dir }) => {
    const folder = notes(dir);
    const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
    // A user's database with three datasets.
    const mine = join(dir, 'mine.db');
    const c = new Client({ path: mine });
    for (const name of ['handbook', 'contracts', 'notes']) await c.createDataset({ name });
    await c.close();
    const before = sha(mine);
    const refused = await run(['quickstart', '--folder', folder, '--db', mine]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`--db ${mine} holds 3 dataset(s) quickstart did not make ("handbook", "contracts", "notes"); quickstart deletes its --db first: give another --db (default ragloom-quickstart.db), or --force to delete it`);
    expect(sha(mine)).toBe(before);
    // A text file, and a folder.
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'my notes, not a database\n');
    const t = await run(['quickstart', '--folder', folder, '--db', text]);
    expect(t.code).toBe(1);
    expect(t.err).toContain(`--db ${text} exists and is not a database quickstart made`);
    expect(readFileSync(text, 'utf8')).toBe('my notes, not a database\n');
    expect((await run(['quickstart', '--folder', folder, '--db', folder])).err).toContain(`--db ${folder} is a folder`);
    // A database quickstart made is made again; --force deletes the user's. (A question the notes
    // answer: quickstart's own is about ragloom, and finding no chunk is exit status 1.)
    const own = join(dir, 'q.db');
    const ask = ['--question', 'What does a convergent-divergent nozzle do?'];
    expect((await run(['quickstart', '--folder', folder, ...ask, '--db', own, '--json'])).code).toBe(0);
    const again = await run(['quickstart', '--folder', folder, ...ask, '--db', own, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out).ingest).toMatchObject({ added: 2, unchanged: 0 });
    const forced = await run(['quickstart', '--folder', folder, ...ask, '--db', mine, '--force', '--json']);
    expect(forced.code).toBe(0);
    const after = new Client({ path: mine, readonly: true });
    expect((await after.listDatasets()).map((d) => d.name)).toEqual(['quickstart']);
    await after.close();
  });

  test('models ls lists the built-in models; models pull fails cleanly offline', async ({ dir }) => {
    const ls = await run(['models', 'ls']);
    expect(ls.code).toBe(0);
    expect(ls.out).toContain('ragloom-static-en-256@Builtin');
    process.env.HF_ENDPOINT = 'http://127.0.0.1:9/';
    try {
      const pull = await run(['models', 'pull', 'Xenova/all-MiniLM-L6-v2', '--dir', join(dir, 'models')]);
      expect(pull.code).toBe(1);
      expect(pull.err).toMatch(/hub/i);
    } finally {
      delete process.env.HF_ENDPOINT;
    }
  });

  test('ingest reads files without an extension by their content; a folder with nothing to add is refused and makes no dataset', async ({ dir }) => {
    const project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'README'), 'The breakwater project rebuilds the harbour wall before the winter storms.\n');
    writeFileSync(join(project, 'LICENSE'), 'Permission is hereby granted, free of charge, to any person obtaining a copy of this software.\n');
    writeFileSync(join(project, 'build'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
    const db = join(dir, 'kb.db');
    const r = await run(['ingest', project, '--db', db]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/README\s+added\s+DONE\s+1/);
    expect(r.out).toMatch(/LICENSE\s+added\s+DONE\s+1/);
    expect(r.out).toContain('skipped (unsupported type): build');
    // Nothing ragloom reads: exit 1, a message, no empty dataset left behind.
    const bins = join(dir, 'bins');
    mkdirSync(bins);
    writeFileSync(join(bins, 'a.exe'), Buffer.from([0x4d, 0x5a, 0x90, 0x00]));
    writeFileSync(join(bins, 'tool'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]));
    const none = await run(['ingest', bins, '--db', db]);
    expect(none.code).toBe(1);
    expect(none.err).toContain(`${bins}: nothing to ingest: none of its 2 file(s) is a type ragloom reads (a.exe, tool; see docs/parsers.md)`);
    mkdirSync(join(dir, 'void'));
    expect((await run(['ingest', join(dir, 'void'), '--db', db])).err).toContain('nothing to ingest: the folder holds no file');
    const list = await run(['list', '--db', db, '--json']);
    expect(JSON.parse(list.out).datasets.map((d: { name: string }) => d.name)).toEqual(['project']);
    const one = await run(['ingest', join(bins, 'tool'), '--db', db]);
    expect(one.err).toContain('this type of file is not supported (no extension, and the content is not a document ragloom reads');
  });

  test('ask over datasets without a parsed document names them by name, and what to do', async ({ dir }) => {
    const db = join(dir, 'kb.db');
    const c = new Client({ path: db });
    const empty = await c.createDataset({ name: 'handbook' });
    const failed = await c.createDataset({ name: 'contracts' });
    const [doc] = await failed.uploadDocuments([{ display_name: 'c.txt', blob: Buffer.from('a contract') }]);
    await c.close();
    const r = await run(['ask', 'what is the notice period?', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`no dataset of ${db} holds a parsed document yet ("handbook", "contracts"): \`ragloom ingest <folder> --dataset <name> --db ${db}\` adds and parses files`);
    expect(r.err).not.toContain(empty.id);
    const named = await run(['ask', 'what is the notice period?', '--dataset', 'contracts', '--db', db]);
    expect(named.err).toContain(`dataset "contracts" of ${db} holds no parsed document yet`);
    // With one parsed dataset, ask answers from it and leaves the empty one out.
    await run(['ingest', notes(dir), '--dataset', 'notes', '--db', db]);
    const ok = await run(['ask', 'How is heat conduction in slabs solved?', '--db', db, '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out).answer).toMatch(/Laplace transforms/);
    expect(doc!.run).toBe('UNSTART');
  });

  test('bad usage and errors exit non-zero with a message', async ({ dir }) => {
    const bad = await run(['ingest']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('missing <folder|file>');
    expect(bad.err).toContain('Usage: ragloom ingest');
    const db = join(dir, 'e.db');
    await run(['ingest', notes(dir), '--db', db]);
    const r = await run(['retrieve', 'x', '--dataset', 'ghost', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('--dataset ghost: no such dataset');
  });
});
