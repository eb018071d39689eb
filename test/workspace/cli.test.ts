import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { run as runCli } from '../cli/run.js';
import { formatTable } from '../../src/cli/table.js';
import { FILES, Workspace } from '../../src/workspace/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ragloom-ws-cli-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

/** `ragloom workspace <argv>`, with stdout and stderr captured (the shared CLI runner). */
const run = (...argv: string[]) => runCli(['workspace', ...argv]);

const rows = (out: string) => out.trim().split('\n').map((l) => l.split(/\s{2,}/));

describe('ragloom workspace add / ls / rm', () => {
  it('adds records of every kind, saves, and lists them as tables', async () => {
    expect((await run('add', dir, 'dataset', '--name', '昆虫', '--type', 'detection_voc', '--desc', 'bugs')).code).toBe(0);
    const pj = await run('add', dir, 'project', '--name', 'det', '--type', 'detection', '--did', 'D0001');
    expect(pj.code).toBe(0);
    expect(pj.out.split('\n')[0]).toBe('created P0001');
    expect((await run('add', dir, 'task', '--pid', 'P0001', '--desc', 'base')).code).toBe(0);
    expect((await run('add', dir, 'task', '--pid', 'P0001', '--parent', 'T0001')).code).toBe(0);
    expect((await run('add', dir, 'pm', '--name', 'pre', '--pid', 'P0001', '--tid', 'T0001', '--model', 'YOLOv3-DarkNet53')).code).toBe(0);
    const em = await run('add', dir, 'exported', '--name', 'lite', '--pid', 'P0001', '--tid', 'T0002', '--path', join(dir, 'out'), '--exported-type', '1');
    expect(em.code).toBe(0);

    const saved = await Workspace.open(dir);
    expect(saved.tasks.get('T0002')?.parent_id).toBe('T0001');
    expect(saved.exportedModels.get('EM0001')?.exported_type).toBe(1);

    const ds = await run('ls', dir, 'datasets');
    expect(ds.code).toBe(0);
    const table = rows(ds.out);
    expect(table[0]).toEqual(['ID', 'NAME', 'TYPE', 'DESC', 'CREATED', 'PATH']);
    expect(table[1]?.every((c) => /^-+$/.test(c))).toBe(true);
    expect(table[2]?.slice(0, 4)).toEqual(['D0001', '昆虫', 'detection_voc', 'bugs']);
    // CJK names take two columns, so the next column still lines up.
    const lines = ds.out.split('\n');
    expect(lines[2]?.indexOf('detection_voc')).toBe((lines[0]?.indexOf('TYPE') ?? 0) - 2);

    const tasks = rows((await run('ls', dir, 'task')).out);
    expect(tasks.slice(2).map((r) => [r[0], r[1], r[2]])).toEqual([['T0001', 'P0001', '-'], ['T0002', 'P0001', 'T0001']]);
    const ems = rows((await run('ls', dir, 'em')).out);
    expect(ems[0]).toContain('EXPORT');
    expect(ems[2]).toContain('lite');

    const all = await run('ls', dir);
    for (const title of ['datasets:', 'projects:', 'tasks:', 'pretrained models:', 'exported models:']) expect(all.out).toContain(title);
    expect(all.out).toContain('PM0001');
  });

  it('rm refuses a dataset in use with exit code 1 and the error message, changing nothing', async () => {
    await run('add', dir, 'dataset', '--name', 'd', '--type', 'classification');
    await run('add', dir, 'project', '--name', 'p', '--type', 'classification', '--did', 'D0001');
    const before = await readFile(join(dir, FILES.newest));
    const r = await run('rm', dir, 'dataset', 'D0001');
    expect(r.code).toBe(1);
    expect(r.err).toContain('DATASET_IN_USE');
    expect(r.err).toContain('Dataset D0001 is still used by 1 project(s) (P0001)');
    expect(await readFile(join(dir, FILES.newest))).toEqual(before);
  });

  it('rm of a project reports the models left behind; --cascade deletes them', async () => {
    await run('add', dir, 'dataset', '--name', 'd', '--type', 'classification');
    await run('add', dir, 'project', '--name', 'p', '--type', 'classification', '--did', 'D0001');
    await run('add', dir, 'project', '--name', 'q', '--type', 'classification', '--did', 'D0001');
    for (const p of ['P0001', 'P0002']) {
      await run('add', dir, 'task', '--pid', p);
    }
    await run('add', dir, 'em', '--name', 'a', '--pid', 'P0001', '--tid', 'T0001', '--path', join(dir, 'a'));
    await run('add', dir, 'em', '--name', 'b', '--pid', 'P0002', '--tid', 'T0002', '--path', join(dir, 'b'));
    const r = await run('rm', dir, 'project', 'P0001');
    expect(r.code).toBe(0);
    expect(r.out).toContain('deleted P0001 T0001');
    expect(r.out).toContain('warning: models EM0001 still point at deleted records');
    const c = await run('rm', dir, 'project', 'P0002', '--cascade');
    expect(c.out.trim()).toBe('deleted P0002 T0002 EM0002');
    const ws = await Workspace.open(dir);
    expect(ws.exportedModels.list().map((m) => m.id)).toEqual(['EM0001']);
    expect(ws.projects.size).toBe(0);
  });

  it('bind binds a project and checks the types', async () => {
    await run('add', dir, 'dataset', '--name', 'd', '--type', 'segmentation');
    await run('add', dir, 'project', '--name', 'p', '--type', 'classification');
    const bad = await run('bind', dir, 'P0001', 'D0001');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('TYPE_MISMATCH');
    await run('add', dir, 'project', '--name', 'q', '--type', 'segmentation');
    const ok = await run('bind', dir, 'P0002', 'D0001');
    expect(ok).toMatchObject({ code: 0, out: 'bound P0002 to D0001\n' });
  });

  it('add reports rule violations with exit code 1', async () => {
    const r = await run('add', dir, 'dataset', '--name', 'd', '--type', 'detection');
    expect(r.code).toBe(1);
    expect(r.err).toContain('INVALID_DATASET_TYPE');
    const t = await run('add', dir, 'task', '--pid', 'P0001');
    expect(t.code).toBe(1);
    expect(t.err).toContain('Project "P0001" does not exist.');
  });
});

describe('ragloom workspace show', () => {
  it('prints path, version, counters, counts and issues', async () => {
    await run('add', dir, 'dataset', '--name', 'd', '--type', 'classification');
    await run('add', dir, 'dataset', '--name', 'e', '--type', 'classification');
    await run('rm', dir, 'dataset', 'D0001');
    const r = await run('show', dir);
    expect(r.code).toBe(0);
    const t = rows(r.out);
    expect(t).toContainEqual(['path', dir]);
    expect(t).toContainEqual(['version', '0.2.0']);
    expect(t).toContainEqual(['loaded from', 'workspace.newest.pb']);
    expect(t).toContainEqual(['datasets', '1', '2', 'D0003']);
    expect(t).toContainEqual(['exported models', '0', '0', 'EM0001']);
    expect(r.out).toContain('issues: none');
  });

  it('shows a new folder without creating it', async () => {
    const r = await run('show', join(dir, 'nothing'));
    expect(r.code).toBe(0);
    expect(r.out).toContain('new (no workspace file yet)');
  });
});

describe('command line errors', () => {
  it.each([
    [[], 'missing <command>'],
    [['frob', '/x'], 'unknown command "frob"'],
    [['ls'], 'missing <dir>'],
    [['ls', '/x', 'widgets'], 'unknown kind "widgets"'],
    [['add', '/x'], 'missing <kind>'],
    [['add', '/x', 'dataset', '--pid', 'P1'], '--pid does not apply to a dataset'],
    [['add', '/x', 'em', '--exported-type', 'lite'], '--exported-type takes 0'],
    [['rm', '/x', 'dataset'], 'missing <id>'],
    [['show', '/x', '--name', 'n'], '--name does not apply to "show"'],
    [['show', '/x', 'extra'], 'unexpected argument "extra"'],
    [['ls', '/x', '--colour'], "Unknown option '--colour'"],
  ])('%j → exit 1: %s', async (argv, message) => {
    const r = await run(...argv);
    expect(r.code).toBe(1);
    expect(r.err).toContain(message);
    expect(r.err).toContain('Usage: ragloom workspace');
    expect(r.out).toBe('');
  });

  it('--help prints the usage and exits 0', async () => {
    const r = await run('--help');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toContain('Usage: ragloom workspace');
  });
});

describe('formatTable()', () => {
  it('pads columns to the widest cell and trims line ends', () => {
    expect(formatTable(['A', 'BB'], [['xyz', ''], ['1', '22']])).toBe('A    BB\n---  --\nxyz\n1    22\n');
  });
});
