/**
 * `ragloom ingest` as a sync tool (issue 19 item 5): re-running adds nothing, a changed file keeps
 * its document id and gets its new content, `--sync` removes documents whose files are gone, one
 * file is a valid argument, and the progress bar's numbers add up (never NaN).
 */
import { describe, expect, afterEach, vi } from 'vitest';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../helpers.js';
import { Client } from '../../src/index.js';
import { run, runJson, runProcess } from './run.js';

afterEach(() => vi.restoreAllMocks());

interface Summary {
  dataset: { id: string; name: string };
  added: number; updated: number; unchanged: number; removed: number; retried: number; failed: number;
  files: Array<{ file: string; document_id: string; action: string; status: string; chunks: number }>;
  removed_documents: string[]; stale_documents: string[]; skipped: Array<{ file: string; reason: string }>;
}

function folder(dir: string): string {
  const f = join(dir, 'docs');
  mkdirSync(join(f, 'sub'), { recursive: true });
  writeFileSync(join(f, 'nozzles.md'), '# Nozzles\n\nA convergent-divergent nozzle accelerates gas to supersonic speed.\n');
  writeFileSync(join(f, 'sub', 'heat.txt'), 'Heat conduction in composite slabs is solved with Laplace transforms.\n');
  writeFileSync(join(f, 'wings.md'), '# Wings\n\nSwept wings delay the drag rise near the speed of sound.\n');
  writeFileSync(join(f, 'program.exe'), 'MZ');
  return f;
}

/** The dataset's documents as name → [id, run, chunk count]. */
async function documents(db: string, dataset: string): Promise<Record<string, [string, string, number]>> {
  const c = new Client({ path: db });
  try {
    const ds = await c.getDataset(dataset);
    return Object.fromEntries((await ds.listDocuments({ page_size: 0 })).map((d) => [d.name, [d.id, d.run, d.chunk_count]]));
  } finally {
    await c.close();
  }
}

describe('ragloom ingest, re-run', () => {
  test('a second run on an unchanged folder adds nothing (no name(1) copies) and parses nothing', async ({ dir }) => {
    const src = folder(dir);
    const db = join(dir, 'kb.db');
    const first = await runJson<Summary>(['ingest', src, '--db', db]);
    expect(first.code, first.err).toBe(0);
    expect(first.json).toMatchObject({ dataset: { name: 'docs' }, added: 3, updated: 0, unchanged: 0, removed: 0, failed: 0 });
    expect(first.json.skipped).toEqual([{ file: 'program.exe', reason: 'unsupported type' }]);
    const before = await documents(db, 'docs');
    expect(Object.keys(before).sort()).toEqual(['nozzles.md', 'sub__heat.txt', 'wings.md']);

    const again = await run(['ingest', src, '--db', db]);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain('docs: 0 added, 0 updated, 3 unchanged, 0 removed');
    expect(again.out).toContain('nothing to parse');
    expect(await documents(db, 'docs')).toEqual(before);
  });

  test('a changed file keeps its document id and gets its new content; the others stay unchanged', async ({ dir }) => {
    const src = folder(dir);
    const db = join(dir, 'kb.db');
    expect((await run(['ingest', src, '--db', db, '--dataset', 'aero'])).code).toBe(0);
    const before = await documents(db, 'aero');
    writeFileSync(join(src, 'wings.md'), '# Wings\n\nWinglets at the tips cut the induced drag of a cruising airliner.\n');
    const r = await runJson<Summary>(['ingest', src, '--db', db, '--dataset', 'aero']);
    expect(r.code, r.err).toBe(0);
    expect(r.json).toMatchObject({ added: 0, updated: 1, unchanged: 2, removed: 0 });
    expect(r.json.files).toEqual([expect.objectContaining({ file: 'wings.md', action: 'updated', status: 'DONE', document_id: before['wings.md']![0], chunks: 1 })]);
    expect(await documents(db, 'aero')).toEqual(before);

    const hits = await runJson<{ chunks: Array<{ document_name: string; content: string }> }>(['retrieve', 'winglets induced drag', '--db', db, '--dataset', 'aero', '--top', '1']);
    expect(hits.json.chunks[0]).toMatchObject({ document_name: 'wings.md' });
    expect(hits.json.chunks[0]!.content).toContain('Winglets');
    const old = await runJson<{ chunks: Array<{ content: string }> }>(['retrieve', 'swept wings drag rise', '--db', db, '--dataset', 'aero', '--threshold', '0']);
    expect(old.json.chunks.some((c) => c.content.includes('Swept'))).toBe(false);
  });

  test('files that are gone: reported without --sync, their documents deleted with it', async ({ dir }) => {
    const src = folder(dir);
    const db = join(dir, 'kb.db');
    await run(['ingest', src, '--db', db]);
    rmSync(join(src, 'sub'), { recursive: true });
    const kept = await run(['ingest', src, '--db', db]);
    expect(kept.code).toBe(0);
    expect(kept.out).toContain('docs: 0 added, 0 updated, 2 unchanged, 0 removed');
    expect(kept.out).toContain('1 documents have no file any more (--sync removes them): sub__heat.txt');
    expect(Object.keys(await documents(db, 'docs'))).toHaveLength(3);

    const synced = await runJson<Summary>(['ingest', src, '--db', db, '--sync']);
    expect(synced.json).toMatchObject({ added: 0, updated: 0, unchanged: 2, removed: 1, removed_documents: ['sub__heat.txt'] });
    expect(Object.keys(await documents(db, 'docs')).sort()).toEqual(['nozzles.md', 'wings.md']);
  });

  test('one file is a valid argument (named by its file name); --sync is refused with it', async ({ dir }) => {
    const src = folder(dir);
    const db = join(dir, 'kb.db');
    const one = await runJson<Summary>(['ingest', join(src, 'sub', 'heat.txt'), '--db', db, '--dataset', 'notes']);
    expect(one.code, one.err).toBe(0);
    expect(one.json).toMatchObject({ dataset: { name: 'notes' }, added: 1 });
    expect(Object.keys(await documents(db, 'notes'))).toEqual(['heat.txt']);
    const again = await runJson<Summary>(['ingest', join(src, 'sub', 'heat.txt'), '--db', db, '--dataset', 'notes']);
    expect(again.json).toMatchObject({ added: 0, unchanged: 1 });

    const sync = await run(['ingest', join(src, 'sub', 'heat.txt'), '--db', db, '--dataset', 'notes', '--sync']);
    expect(sync.code).toBe(1);
    expect(sync.err).toContain('--sync needs a folder');
    const exe = await run(['ingest', join(src, 'program.exe'), '--db', db]);
    expect(exe.code).toBe(1);
    expect(exe.err).toContain('this type of file is not supported (.exe');
    const missing = await run(['ingest', join(dir, 'nope'), '--db', db]);
    expect([missing.code, missing.err.trim()]).toEqual([1, `${join(dir, 'nope')}: no such file or folder`]);
  });

  test('an existing dataset keeps its chunk method: a different --chunk-method is refused, not ignored', async ({ dir }) => {
    const src = folder(dir);
    const db = join(dir, 'kb.db');
    expect((await run(['ingest', src, '--db', db, '--chunk-method', 'one'])).code).toBe(0);
    expect((await run(['ingest', src, '--db', db, '--chunk-method', 'one'])).code).toBe(0);
    const r = await run(['ingest', src, '--db', db, '--chunk-method', 'qa']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('dataset "docs" exists with chunk method one; --chunk-method qa applies only when ingest creates the dataset');
  });

  test('the real process: the progress bar counts add up to the total, its ETA is never NaN; a re-run is much faster', async ({ dir }) => {
    const src = join(dir, 'many');
    mkdirSync(src);
    for (let i = 0; i < 60; i++) writeFileSync(join(src, `n${String(i).padStart(3, '0')}.md`), `# Note ${i}\n\nThe harbour master logs tide ${i} at dawn.\n`);
    const db = join(dir, 'kb.db');
    const t0 = Date.now();
    const first = await runProcess(['ingest', src, '--db', db, '--progress']);
    const firstMs = Date.now() - t0;
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain('many: 60 added, 0 updated, 0 unchanged, 0 removed');
    const lines = first.err.split(/[\r\n]+/).map((l) => l.trim()).filter((l) => /^(upload|parse|check)\b/.test(l));
    expect(lines.length).toBeGreaterThan(0);
    expect(first.err).not.toMatch(/NaN|Infinity|undefined/);
    for (const l of lines) {
      const m = /(\d+)\/(\d+) files/.exec(l)!;
      expect(Number(m[1]), l).toBeLessThanOrEqual(Number(m[2]));
      expect(l).toMatch(/ETA (--|\d+s|\d+m \d\ds)$/);
    }
    const last = lines.filter((l) => l.startsWith('parse')).at(-1)!;
    expect(last).toMatch(/^parse\s+#+ 60\/60 files \| 60 chunks \| \d+ files\/s \| ETA 0s$/);

    const t1 = Date.now();
    const again = await runProcess(['ingest', src, '--db', db]);
    const againMs = Date.now() - t1;
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain('many: 0 added, 0 updated, 60 unchanged, 0 removed');
    expect(again.err).toBe(''); // not a terminal and no --progress: no bar
    // Both pay the process start; only the first parses 60 files.
    expect(againMs).toBeLessThan(firstMs);
    expect(existsSync(db)).toBe(true);
  }, 120_000);
});
