import { constants } from 'node:fs';
import { access, mkdir, open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { join, relative, isAbsolute, sep } from 'node:path';
import { fail } from './errors.js';

/** File names PaddleX uses inside the workspace folder. */
export const FILES = {
  newest: 'workspace.newest.pb',
  stable: 'workspace.stable.pb',
  bak: 'workspace.bak.pb',
  flag: '.pb.success',
  info: 'info.pb',
} as const;

/** Which file `Workspace.open()` read: newest (flag present), bak (no flag), or none. */
export type LoadSource = 'newest' | 'bak' | 'new';

/**
 * The points of `save()` after which a kill leaves a state the loader can read. Before
 * `flag-created` the folder loads the previous state, from then on the new one.
 */
export const SAVE_STEPS = [
  'tmp-written',
  'bak-updated',
  'flag-removed',
  'newest-renamed',
  'flag-created',
  'stable-updated',
  'records-written',
  'removed',
] as const;
export type SaveStep = (typeof SAVE_STEPS)[number];

async function exists(p: string): Promise<boolean> {
  try {
    await access(p, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/** PaddleX's load order: newest if the flag exists, else bak, else a new workspace. */
export async function readWorkspaceFile(
  dir: string,
): Promise<{ source: LoadSource; file?: string; bytes?: Uint8Array }> {
  const flag = join(dir, FILES.flag);
  const newest = join(dir, FILES.newest);
  const bak = join(dir, FILES.bak);
  if (await exists(flag)) {
    try {
      return { source: 'newest', file: newest, bytes: await readFile(newest) };
    } catch (e) {
      // PaddleX would log this and start empty, losing every record; refusing is safer.
      return fail('CORRUPT_FILE', [newest, `${FILES.flag} exists but the file cannot be read (${String(e)})`], {
        cause: e,
      });
    }
  }
  if (await exists(bak)) return { source: 'bak', file: bak, bytes: await readFile(bak) };
  return { source: 'new' };
}

/** Directory fsync makes a rename or unlink durable; Windows cannot open a directory for it. */
export async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function writeSynced(file: string, bytes: Uint8Array): Promise<void> {
  const fh = await open(file, 'w');
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Writes `file` through `file.tmp` + fsync + rename, so readers see the old or the new bytes. */
export async function writeAtomic(file: string, bytes: Uint8Array, dir: string): Promise<void> {
  const tmp = `${file}.tmp`;
  await writeSynced(tmp, bytes);
  await rename(tmp, file);
  await fsyncDir(dir);
}

/**
 * Writes a snapshot so that a kill at any point leaves a folder PaddleX's loader reads:
 *
 * 1. write `workspace.newest.pb.tmp`, fsync (loader ignores it);
 * 2. if the flag exists, copy newest → bak atomically (the loader still reads newest);
 * 3. remove the flag (the loader now reads bak = the previous state, or starts empty if
 *    there never was one);
 * 4. rename tmp → newest (no flag: still bak);
 * 5. create the flag — the commit point: from here the loader reads the new newest;
 * 6. write stable atomically (never read by the loader; kept because PaddleX keeps it).
 *
 * Afterwards bak holds the previous snapshot, as PaddleX's "previous stable" does.
 */
export async function commitSnapshot(
  dir: string,
  bytes: Uint8Array,
  onStep: (step: SaveStep) => void,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const newest = join(dir, FILES.newest);
  const flag = join(dir, FILES.flag);
  await writeSynced(`${newest}.tmp`, bytes);
  onStep('tmp-written');
  if (await exists(flag)) {
    let previous: Uint8Array | undefined;
    try {
      previous = await readFile(newest);
    } catch {
      previous = undefined; // flag without newest: nothing loadable to keep
    }
    if (previous) await writeAtomic(join(dir, FILES.bak), previous, dir);
  }
  onStep('bak-updated');
  await rm(flag, { force: true });
  await fsyncDir(dir);
  onStep('flag-removed');
  await rename(`${newest}.tmp`, newest);
  await fsyncDir(dir);
  onStep('newest-renamed');
  await writeSynced(flag, new Uint8Array(0));
  await fsyncDir(dir);
  onStep('flag-created');
  await writeAtomic(join(dir, FILES.stable), bytes, dir);
  onStep('stable-updated');
}

/** Writes `file` atomically unless it already holds exactly `bytes`. */
export async function writeIfChanged(file: string, bytes: Uint8Array, dir: string): Promise<void> {
  try {
    const old = await readFile(file);
    if (Buffer.compare(old, bytes) === 0) return;
  } catch {
    // missing or unreadable: write it
  }
  await writeAtomic(file, bytes, dir);
}

/** True when `child` lies strictly inside `parent` (both absolute). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) && rel.split(sep)[0] !== '..';
}

export { mkdir, rm };

/** One `<letter><digits>` folder PaddleX's recovery looks at, and its info.pb if present. */
export interface ScannedDir {
  name: string;
  number: number;
  info?: Uint8Array;
  children?: ScannedDir[];
}

async function scan(parent: string, letter: string, nested?: string): Promise<ScannedDir[]> {
  let names: string[];
  try {
    names = (await readdir(parent, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return [];
  }
  const out: ScannedDir[] = [];
  for (const name of names.sort()) {
    // PaddleX: name[0] == letter and int(name[1:]) parses; PM/EM folders do not.
    if (name[0] !== letter || !/^\d+$/.test(name.slice(1))) continue;
    const d: ScannedDir = { name, number: Number(name.slice(1)) };
    try {
      d.info = await readFile(join(parent, name, FILES.info));
    } catch {
      // no info.pb: the folder still raises the counter
    }
    if (nested) d.children = await scan(join(parent, name), nested);
    out.push(d);
  }
  return out;
}

/** The folders `recover_workspace` reads: datasets/D*, projects/P*, projects/P*\/T*. */
export async function scanRecordDirs(dir: string): Promise<{ datasets: ScannedDir[]; projects: ScannedDir[] }> {
  return { datasets: await scan(join(dir, 'datasets'), 'D'), projects: await scan(join(dir, 'projects'), 'P', 'T') };
}
