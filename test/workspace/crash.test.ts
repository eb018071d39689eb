import { spawn } from 'node:child_process';
import { access, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, it } from 'vitest';
import { SAVE_STEPS, Workspace, type SaveStep } from '../../src/workspace/index.js';

const CHILD = fileURLToPath(new URL('./fixtures/crash-child.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

function runChild(dir: string, step: SaveStep | 'none'): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, step], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, out }));
  });
}

const exists = (p: string) => access(p).then(() => true, () => false);

/** Old state: dataset D0001 bound to project P0001 with task T0001, saved twice (bak exists). */
async function oldState(twice: boolean): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ragloom-ws-crash-'));
  dirs.push(dir);
  const ws = await Workspace.open(dir);
  const ds = ws.datasets.create({ name: 'old', type: 'classification' });
  const pj = ws.projects.create({ name: 'p', type: 'classification', did: ds.id });
  ws.tasks.create({ pid: pj.id });
  await ws.save();
  if (twice) await ws.save();
  return dir;
}

// Until the flag is re-created the loader reads bak (the old state); from then on newest.
const COMMIT = SAVE_STEPS.indexOf('flag-created');
const expectsNew = (step: SaveStep | 'none') => step === 'none' || SAVE_STEPS.indexOf(step) >= COMMIT;
const cases = [...SAVE_STEPS, 'none' as const];

// Each case spawns a node process; running them concurrently keeps the file well under 30 s.
describe.concurrent('Workspace#save() survives a SIGKILL after every step', () => {
  it.for(cases)('first save into an empty folder, killed after %s', async (step, { expect }) => {
    const dir = await mkdtemp(join(tmpdir(), 'ragloom-ws-crash-'));
    dirs.push(dir);
    const r = await runChild(dir, step);
    if (step === 'none') expect(r).toMatchObject({ code: 0, out: 'saved\n' });
    else expect(r.signal, r.out).toBe('SIGKILL');
    const ws = await Workspace.open(dir);
    expect(ws.recovered).toEqual([]);
    const names = ws.datasets.list().map((d) => d.name);
    expect(names).toEqual(expectsNew(step) ? ['new'] : []);
    // The folder stays usable: another save and open work.
    await ws.save();
    expect((await Workspace.open(dir)).datasets.list().map((d) => d.name)).toEqual(names);
  });

  it.for(cases.flatMap((s) => [['once', s], ['twice', s]] as const))(
    'save over a workspace saved %s, killed after %s',
    async ([times, step], { expect }) => {
      const dir = await oldState(times === 'twice');
      const r = await runChild(dir, step);
      if (step === 'none') expect(r).toMatchObject({ code: 0, out: 'saved\n' });
      else expect(r.signal, r.out).toBe('SIGKILL');
      const ws = await Workspace.open(dir);
      // The workspace files alone must hold the state; info.pb recovery must not be needed.
      expect(ws.recovered).toEqual([]);
      const flagGone = ['flag-removed', 'newest-renamed'].includes(step);
      expect(ws.loadedFrom).toBe(flagGone ? 'bak' : 'newest');
      if (expectsNew(step)) {
        expect(ws.datasets.list().map((d) => d.id)).toEqual(['D0002']);
        expect(ws.projects.size + ws.tasks.size).toBe(0);
      } else {
        expect(ws.datasets.list().map((d) => `${d.id} ${d.name}`)).toEqual(['D0001 old']);
        expect(ws.projects.get('P0001')?.did).toBe('D0001');
        expect(ws.tasks.list().map((t) => t.id)).toEqual(['T0001']);
        // Folders of records deleted by the unfinished save are still there.
        expect(await exists(join(dir, 'projects', 'P0001', 'T0001'))).toBe(true);
        expect(await exists(join(dir, 'datasets', 'D0001'))).toBe(true);
      }
      // Counters come from the state that was loaded; ids are never handed out twice.
      expect(ws.counters.max_dataset_id).toBe(expectsNew(step) ? 2 : 1);
      const extra = (await readdir(dir)).filter((f) => !f.endsWith('.tmp')).sort();
      expect(extra).toContain('workspace.stable.pb');
    },
  );
});
