/** `ragloom migrate export|import|verify|rollback`: the pinned interface, exit statuses, keys kept out of every output. */
import { describe, expect, vi, afterEach } from 'vitest';
import { run } from '../cli/run.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '../../src/index.js';
import { migrateImport } from '../../src/migrate/index.js';
import { test, enc } from './fixtures.js';

afterEach(() => vi.restoreAllMocks());

describe('ragloom migrate', () => {
  test('export from a file, import into a server (key from the environment), verify, rollback', async ({ dir, serve }) => {
    const file = join(dir, 'src.db');
    const c = new Client({ path: file });
    const ds = await c.createDataset({ name: 'handbook', description: 'HR handbook' });
    await ds.uploadDocuments(['leave', 'travel', 'security'].map((t) => ({ display_name: `${t}.md`, blob: enc(`# ${t}\n\nThe ${t} policy applies to every employee.\n`) })));
    await c.close();
    const out = join(dir, 'export');

    const ex = await run(['migrate', 'export', '--from', file, '--out', out]);
    expect(ex.code).toBe(0);
    expect(ex.out).toMatch(/^Exported 1 dataset\(s\), 3 file\(s\)/);
    const manifest = join(out, 'manifest.json');
    expect(existsSync(manifest)).toBe(true);

    const dst = await serve('dst');
    const saved = process.env.RAGLOOM_API_KEY;
    process.env.RAGLOOM_API_KEY = dst.apiKey;
    try {
      const dry = await run(['migrate', 'import', '--manifest', manifest, '--to', dst.url, '--dry-run']);
      expect(dry.out).toMatch(/handbook\s+create\s+\(new\)\s+3\s+0/);
      expect(dry.out).toContain('Dry run: nothing was changed.');
      const im = await run(['migrate', 'import', '--manifest', manifest, '--to', dst.url]);
      expect(im.code).toBe(0);
      expect(im.out).toMatch(/Created 1, reused 0 dataset\(s\); uploaded 3, already present 0, failed 0; parsing started for 3/);
      const v = await run(['migrate', 'verify', '--manifest', manifest, '--to', dst.url, '--wait', '60', '--json']);
      expect(v.code).toBe(0);
      const report = JSON.parse(v.out);
      expect(report).toMatchObject({ ok: true, datasets: { expected: 1, found: 1 }, documents: { expected: 3, found: 3 }, runs: { DONE: 3, FAIL: 0, pending: 0 } });
      const table = await run(['migrate', 'verify', '--manifest', manifest, '--to', dst.url]);
      expect(table.out).toMatch(/handbook\s+3\s+3\s+3\s+0\s+0\s+0\.0%/);
      expect(table.out).toContain('Verification passed.');
      for (const r of [ex, dry, im, v, table]) expect(r.out + r.err).not.toContain(dst.apiKey);
      expect(readFileSync(manifest, 'utf8')).not.toContain(dst.apiKey);

      const rb = await run(['migrate', 'rollback', '--manifest', manifest, '--to', dst.url]);
      expect(rb.code).toBe(0);
      expect(rb.out).toMatch(/Deleted 1 dataset\(s\) and 0 document\(s\).*removed the export/);
      expect(existsSync(out)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.RAGLOOM_API_KEY;
      else process.env.RAGLOOM_API_KEY = saved;
    }
  });

  test('import into a database file parses before it exits (the parse step reported); verify passes at once; what is left unparsed is named with the command that parses it', async ({ dir }) => {
    const file = join(dir, 'src.db');
    const c = new Client({ path: file });
    const ds = await c.createDataset({ name: 'handbook' });
    await ds.uploadDocuments(['leave', 'travel', 'security'].map((t) => ({ display_name: `${t}.md`, blob: enc(`# ${t}\n\nThe ${t} policy applies to every employee.\n`) })));
    await c.close();
    const out = join(dir, 'export');
    expect((await run(['migrate', 'export', '--from', file, '--out', out])).code).toBe(0);
    const manifest = join(out, 'manifest.json');
    const kb = join(dir, 'kb.db');

    const steps: Array<{ step: string; done: number; total: number }> = [];
    const s = await migrateImport({ manifest, to: kb, onProgress: (p) => steps.push(p) });
    expect(s).toMatchObject({ uploaded: 3, parse_started: 3, parsed: { DONE: 3, FAIL: 0, CANCEL: 0 } });
    expect(steps.filter((p) => p.step === 'parse').at(-1)).toMatchObject({ done: 3, total: 3 });
    const v = await run(['migrate', 'verify', '--manifest', manifest, '--to', kb]);
    expect(v.code).toBe(0);
    expect(v.out).toContain('Verification passed.');

    // An import that did not parse (--no-parse): verify says what to do, and doing it works.
    const kb2 = join(dir, 'kb2.db');
    const im = await run(['migrate', 'import', '--manifest', manifest, '--to', kb2, '--no-parse']);
    expect(im.out).toMatch(/parsing started for 0; /);
    const pending = await run(['migrate', 'verify', '--manifest', manifest, '--to', kb2]);
    expect(pending.code).toBe(1);
    expect(pending.out).toContain(`problem: handbook: 3 document(s) not parsed (yet): run \`ragloom migrate import --manifest ${manifest} --to ${kb2}\` again: it parses them and waits until they are done`);
    const again = await run(['migrate', 'import', '--manifest', manifest, '--to', kb2]);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/already present 3, failed 0; parsing started for 3 \(parsed: 3 DONE, 0 FAIL\)/);
    expect((await run(['migrate', 'verify', '--manifest', manifest, '--to', kb2])).code).toBe(0);
  });

  test('verify exits 1 when the import is missing; usage errors name the flag; every command answers --help', async ({ dir }) => {
    const file = join(dir, 'src.db');
    const c = new Client({ path: file });
    const ds = await c.createDataset({ name: 'notes' });
    await ds.uploadDocuments([{ display_name: 'n.txt', blob: enc('a note about turbines') }]);
    await c.close();
    const out = join(dir, 'x');
    expect((await run(['migrate', 'export', '--from', file, '--out', out])).code).toBe(0);
    const empty = join(dir, 'empty.db');
    await new Client({ path: empty }).close();
    const v = await run(['migrate', 'verify', '--manifest', join(out, 'manifest.json'), '--to', empty]);
    expect(v.code).toBe(1);
    expect(v.out).toContain('problem: notes: no such dataset in the target');
    expect(v.out).toContain('Verification FAILED.');

    const noFrom = await run(['migrate', 'export', '--out', out]);
    expect(noFrom.code).toBe(1);
    expect(noFrom.err).toMatch(/^Usage: --from is required/);
    const batch = await run(['migrate', 'import', '--manifest', join(out, 'manifest.json'), '--to', empty, '--batch-size', '0']);
    expect(batch.err).toMatch(/^Usage: --batch-size must be between 1 and 1000, got 0\n/);
    const rate = await run(['migrate', 'verify', '--manifest', join(out, 'manifest.json'), '--to', empty, '--max-failure-rate', '1.5']);
    expect(rate.err).toMatch(/^Usage: --max-failure-rate must be a number between 0 and 1, got 1\.5\n/);
    const missing = await run(['migrate', 'import', '--manifest', join(dir, 'none.json'), '--to', empty]);
    expect(missing.err).toMatch(/^Error: Cannot read the manifest .*none\.json: ENOENT/);
    expect((await run(['migrate', 'frobnicate'])).err).toMatch(/unknown migrate command "frobnicate"/);
    for (const sub of ['export', 'import', 'verify', 'rollback']) {
      const h = await run(['migrate', sub, '--help']);
      expect(h.code).toBe(0);
      expect(h.out).toContain(`ragloom migrate ${sub}`);
    }
    expect((await run(['migrate', '--help'])).out).toContain('Usage: ragloom migrate export|import|verify|rollback');
  });

  test('numeric flags are checked as every command checks them, before anything is read or changed', async ({ dir }) => {
    const manifest = join(dir, 'none', 'manifest.json');
    const to = join(dir, 'target.db');
    const cases: Array<[string, string[], string]> = [
      ['import', ['--batch-size', 'ten'], "--batch-size must be a whole number, got 'ten'"],
      ['import', ['--batch-size', '2.5'], "--batch-size must be a whole number, got '2.5'"],
      ['import', ['--batch-size', ''], "--batch-size must be a whole number, got ''"],
      ['import', ['--batch-size', '0'], '--batch-size must be between 1 and 1000, got 0'],
      ['import', ['--batch-size', '1e3'], "--batch-size must be a whole number, got '1e3'"],
      ['verify', ['--wait', 'soon'], "--wait must be a whole number, got 'soon'"],
      ['verify', ['--wait=-1'], '--wait must be between 0 and 86400, got -1'],
      ['verify', ['--max-failure-rate', '1.5'], '--max-failure-rate must be a number between 0 and 1, got 1.5'],
      ['verify', ['--max-failure-rate', 'half'], "--max-failure-rate must be a number between 0 and 1, got 'half'"],
      ['verify', ['--max-failure-rate', ' '], "--max-failure-rate must be a number between 0 and 1, got ' '"],
    ];
    for (const [sub, flags, message] of cases) {
      const r = await run(['migrate', sub, '--manifest', manifest, '--to', to, ...flags]);
      expect({ flags, code: r.code, out: r.out }).toEqual({ flags, code: 1, out: '' });
      // The message the shared helpers give (`ragloom retrieve --top x` says it alike), then the command's help.
      expect(r.err.split('\n')[0], flags.join(' ')).toBe(`Usage: ${message}`);
      expect(r.err).toContain(`ragloom migrate ${sub} --manifest`);
      const j = await run(['migrate', sub, '--manifest', manifest, '--to', to, ...flags, '--json']);
      expect(j.code).toBe(1);
      expect((JSON.parse(j.out) as { error: { message: string } }).error.message.split('\n')[0]).toBe(message);
    }
    expect(existsSync(to)).toBe(false); // refused before the target was opened
    // Good values pass the check (the missing manifest is what stops these).
    for (const [sub, flags] of [['import', ['--batch-size', ' 25 ']], ['verify', ['--wait', '0', '--max-failure-rate', '0.25']]] as const) {
      const r = await run(['migrate', sub, '--manifest', manifest, '--to', to, ...flags]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^Error: Cannot read the manifest .*manifest\.json: ENOENT/);
    }
  });
});
