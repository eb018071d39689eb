import { describe, expect, vi, afterEach } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../helpers.js';
import { run } from './run.js';

afterEach(() => vi.restoreAllMocks());

function notes(dir: string): string {
  const folder = join(dir, 'notes');
  mkdirSync(join(folder, 'sub'), { recursive: true });
  writeFileSync(join(folder, 'nozzles.md'), '# Nozzles\n\nA convergent-divergent nozzle accelerates gas to supersonic speed.\n');
  writeFileSync(join(folder, 'sub', 'heat.txt'), 'Heat conduction in composite slabs is solved with Laplace transforms.\n');
  writeFileSync(join(folder, 'program.exe'), 'MZ');
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
