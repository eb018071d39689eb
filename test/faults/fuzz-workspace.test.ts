/**
 * Fuzzed inputs for the workspace module (issue 17 item 3): every public operation of
 * `ragloom/workspace` — `Workspace.open / fromBytes / fromJSON / decode / encode`, each
 * collection's `create / get / has / list / update / delete`, `bindDataset`, `check`, `toJSON`,
 * `encode`, `save` — called with random and hostile values: wrong types, huge strings, NaN,
 * ±Infinity, BigInt, deep and cyclic objects, unicode edge cases, own `__proto__` / `constructor`
 * keys, ids of the right shape that name nothing, and path traversal in record paths and folder
 * names (`../../x`, `/etc/passwd`, `C:\x`, names with NUL).
 *
 * The property, per case (a fresh copy of a fixture workspace folder, opened):
 *  - the call succeeds, or fails with a `WorkspaceError` whose `code` is one of the catalogue's
 *    and whose message is non-empty and shows no internals;
 *  - after a rejected call the workspace is unchanged: `encode()` gives the same bytes, and the
 *    folder's files are byte-for-byte what they were;
 *  - no prototype gains keys;
 *  - nothing is written outside the workspace folder (the folder lives in the working directory,
 *    two levels below the test's root, so `../../x` would be seen);
 *  - after an accepted change, `save()` succeeds (whatever was accepted can be written) or fails
 *    with a `WorkspaceError`, still writes nothing outside the folder, and the saved folder opens
 *    to the same bytes.
 *
 * RAGLOOM_FUZZ_SEED (default 1717) and RAGLOOM_FUZZ_RUNS (runs per operation, default 40); the
 * number of fuzz cases run is printed at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { Workspace, WorkspaceError, ERROR_CODES, Collection } from '../../src/workspace/index.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SEED = Number(process.env.RAGLOOM_FUZZ_SEED ?? 1717);
const RUNS = Number(process.env.RAGLOOM_FUZZ_RUNS ?? 40);
const KINDS = ['datasets', 'projects', 'tasks', 'pretrainedModels', 'exportedModels'] as const;
type Kind = (typeof KINDS)[number];

// ---------------------------------------------------------------- hostile values

const once = (() => {
  const c = new Map<string, unknown>();
  return <T>(k: string, make: () => T): T => (c.has(k) ? (c.get(k) as T) : (c.set(k, make()), c.get(k) as T));
})();

function deep(depth: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** By name, so counterexamples stay short. `root` is the test's root folder. */
const HOSTILE: Record<string, (root: string) => unknown> = {
  undefined: () => undefined,
  null: () => null,
  true: () => true,
  zero: () => 0,
  one: () => 1,
  negZero: () => -0,
  nan: () => NaN,
  inf: () => Infinity,
  e308: () => 1e308,
  neg1: () => -1,
  float: () => 0.5,
  bigint: () => 1n,
  symbol: () => Symbol('fuzz'),
  fn: () => () => 'called',
  date: () => new Date(0),
  map: () => new Map([['a', 1]]),
  bytes: () => new Uint8Array([1, 2, 3]),
  empty: () => '',
  spaces: () => '   ',
  huge: () => once('huge', () => 'h'.repeat(1 << 20)),
  huge10m: () => once('huge10m', () => 'x'.repeat(10 << 20)),
  loneSurrogate: () => 'a\uD800b',
  nul: () => 'a\u0000b',
  rtl: () => '\u202Eevil\u202C',
  combining: () => 'e\u0301\u0302',
  zwj: () => '👩‍👩‍👧‍👦',
  traversal: () => '../../x',
  traversalDeep: () => '../../../../../../tmp/ragloom-fuzz-escape',
  traversalMid: () => 'a/../../b',
  dotdot: () => '..',
  dot: () => '.',
  absolute: () => '/etc/passwd',
  absoluteInRoot: (root) => join(root, 'abs-escape'),
  windows: () => 'C:\\x',
  unc: () => '\\\\server\\share',
  nulPath: () => 'datasets/D\u00001',
  newline: () => 'a\nb',
  emptyArr: () => [],
  arr: () => ['a', 'a'],
  emptyObj: () => ({}),
  deepObj: () => once('deep', () => deep(5000)),
  cycle: () => {
    const o: Json = { a: 1 };
    o.self = o;
    return o;
  },
  protoObj: () => JSON.parse('{"__proto__": {"polluted": "yes"}, "name": "x"}'),
  ctorObj: () => JSON.parse('{"constructor": {"prototype": {"polluted": "yes"}}}'),
  nullProto: () => Object.assign(Object.create(null), { name: 'x' }),
  noToString: () => JSON.parse('{"toString": 1, "valueOf": 2}'),
  protoKey: () => '__proto__',
  ctorKey: () => 'constructor',
  // ids: the right shape, nothing behind them / another kind's
  d1: () => 'D0001',
  d2: () => 'D0002',
  d9: () => 'D9999',
  p1: () => 'P0001',
  p2: () => 'P0002',
  t1: () => 'T0001',
  t2: () => 'T0002',
  pm1: () => 'PM0001',
  em1: () => 'EM0001',
  lowerId: () => 'd0001',
  // field values
  clsType: () => 'classification',
  detType: () => 'detection',
  vocType: () => 'detection_voc',
  cocoType: () => 'detection_coco',
  segType: () => 'segmentation',
  legacyType: () => 'instance_segmentation',
  exported1: () => 1,
  exported2: () => 2,
};
const NAMES = Object.keys(HOSTILE);
type Recipe = { h: string } | { v: unknown };
const recipe: fc.Arbitrary<Recipe> = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom(...NAMES.filter((n) => n !== 'huge10m')).map((h) => ({ h })) },
  { weight: 1, arbitrary: fc.constant({ h: 'huge10m' }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map((v) => ({ v })) },
  { weight: 2, arbitrary: fc.anything({ maxDepth: 2, withBigInt: true, withDate: true, withNullPrototype: true, withSparseArray: true, withMap: true }).map((v) => ({ v })) },
);
const val = (r: Recipe, root: string): unknown => ('h' in r ? HOSTILE[r.h]!(root) : r.v);

/** Field objects: valid ones per kind, then 0–3 fields set to hostile values (own properties). */
const FIELD_KEYS = ['name', 'desc', 'type', 'path', 'did', 'pid', 'tid', 'parent_id', 'model', 'exported_type', 'id', 'create_time', '__proto__', 'constructor', 'unknown'];
const VALID_CREATE: Record<Kind, Json> = {
  datasets: { name: 'new', desc: 'd', type: 'segmentation' },
  projects: { name: 'new', desc: 'd', type: 'classification', did: 'D0001' },
  tasks: { pid: 'P0001', desc: 'd', parent_id: 'T0001' },
  pretrainedModels: { name: 'pm', model: 'ResNet50', pid: 'P0001', tid: 'T0001' },
  exportedModels: { name: 'em', model: 'ResNet50', pid: 'P0001', tid: 'T0001', path: 'exported/em2', exported_type: 1 },
};
const VALID_UPDATE: Record<Kind, Json> = {
  datasets: { name: 'renamed', desc: 'x' },
  projects: { name: 'renamed', did: 'D0001' },
  tasks: { desc: 'x', parent_id: '' },
  pretrainedModels: { name: 'renamed' },
  exportedModels: { exported_type: 0 },
};
const FIRST_ID: Record<Kind, string> = { datasets: 'D0001', projects: 'P0001', tasks: 'T0001', pretrainedModels: 'PM0001', exportedModels: 'EM0001' };

const edits = fc.array(fc.record({ key: fc.constantFrom(...FIELD_KEYS), drop: fc.integer({ min: 0, max: 6 }).map((n) => n === 0), value: recipe }), { maxLength: 3 });
type Edits = Array<{ key: string; drop: boolean; value: Recipe }>;

function fields(base: Json, es: Edits, root: string): Json {
  const o: Json = { ...base };
  for (const e of es) {
    if (e.drop) delete o[e.key];
    else Object.defineProperty(o, e.key, { value: val(e.value, root), enumerable: true, writable: true, configurable: true });
  }
  return o;
}

/** An argument: usually a hostile value, sometimes a valid one (so later checks are reached). */
const arg = (valid: string): fc.Arbitrary<Recipe> => fc.oneof({ weight: 2, arbitrary: fc.constant({ v: valid } as Recipe) }, { weight: 3, arbitrary: recipe });

// ---------------------------------------------------------------- operations

interface Ctx {
  ws: Workspace;
  dir: string;
  root: string;
  pristineBytes: Uint8Array;
}
interface Op {
  /** Arguments, as data fast-check can print. */
  args: fc.Arbitrary<unknown>;
  run(c: Ctx, a: any): unknown; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** A static operation: no workspace state to compare. */
  static?: true;
}

function mutateBytes(bytes: Uint8Array, how: { cut: number; flips: Array<[number, number]> }): Uint8Array {
  const b = Uint8Array.from(bytes.subarray(0, Math.max(0, bytes.length - how.cut)));
  for (const [i, x] of how.flips) if (b.length) b[i % b.length] = x;
  return b;
}

const OPS: Record<string, Op> = {
  'Workspace.open': { static: true, args: arg('.'), run: (c, a: Recipe) => Workspace.open(val(a, c.root) as string) },
  'Workspace.fromBytes': {
    static: true,
    args: fc.record({ cut: fc.nat(40), flips: fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 4 }), dir: arg('fresh'), raw: fc.option(recipe, { freq: 4 }) }),
    run: (c, a) => Workspace.fromBytes((a.raw ? val(a.raw, c.root) : mutateBytes(c.pristineBytes, a)) as Uint8Array, val(a.dir, c.root) as string),
  },
  'Workspace.fromJSON': {
    static: true,
    args: fc.record({ path: fc.constantFrom('datasets.D0001', 'projects.P0001', 'tasks.T0001', 'max_task_id', 'version', 'exported_models.EM0001', '__proto__', 'datasets', 'unknown', 'datasets.D0001.type'), value: recipe, asString: fc.boolean(), dir: arg('fresh') }),
    run: (c, a) => {
      const j = c.ws.toJSON() as unknown as Json;
      const parts = (a.path as string).split('.');
      let o = j;
      for (const p of parts.slice(0, -1)) o = o[p];
      Object.defineProperty(o, parts[parts.length - 1]!, { value: val(a.value, c.root), enumerable: true, writable: true, configurable: true });
      let input: unknown = j;
      if (a.asString) {
        try {
          input = JSON.stringify(j);
        } catch {
          input = j;
        }
      }
      return Workspace.fromJSON(input as object, val(a.dir, c.root) as string);
    },
  },
  'Workspace.decode': {
    static: true,
    args: fc.record({ cut: fc.nat(40), flips: fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 4 }), raw: fc.option(recipe, { freq: 4 }) }),
    run: (c, a) => Workspace.decode((a.raw ? val(a.raw, c.root) : mutateBytes(c.pristineBytes, a)) as Uint8Array),
  },
  'Workspace.encode': {
    static: true,
    args: fc.record({ path: fc.constantFrom('datasets.D0001.name', 'datasets.D0001', 'max_dataset_id', 'projects', 'version', 'exported_models.EM0001.exported_type', '__proto__'), value: recipe }),
    run: (c, a) => {
      const m = c.ws.toJSON() as unknown as Json;
      const parts = (a.path as string).split('.');
      let o = m;
      for (const p of parts.slice(0, -1)) o = o[p];
      Object.defineProperty(o, parts[parts.length - 1]!, { value: val(a.value, c.root), enumerable: true, writable: true, configurable: true });
      return Workspace.encode(m as never);
    },
  },
  bindDataset: { args: fc.tuple(arg('P0002'), arg('D0002')), run: (c, [p, d]: [Recipe, Recipe]) => c.ws.bindDataset(val(p, c.root) as string, val(d, c.root) as string) },
  check: { args: fc.constant(null), run: (c) => c.ws.check() },
  toJSON: { args: fc.constant(null), run: (c) => c.ws.toJSON() },
  encode: { args: fc.constant(null), run: (c) => c.ws.encode() },
  save: { args: fc.constant(null), run: (c) => c.ws.save() },
  counters: { args: fc.constant(null), run: (c) => [c.ws.counters, c.ws.version, c.ws.currentTime, c.ws.loadedFrom, c.ws.recovered] },
};
for (const k of KINDS) {
  const col = (c: Ctx) => c.ws[k] as Collection<never>;
  OPS[`${k}.create`] = { args: fc.record({ es: edits, whole: fc.option(recipe, { freq: 8 }) }), run: (c, a) => col(c).create((a.whole ? val(a.whole, c.root) : fields(VALID_CREATE[k], a.es, c.root)) as never) };
  OPS[`${k}.update`] = {
    args: fc.record({ id: arg(FIRST_ID[k]), es: edits, whole: fc.option(recipe, { freq: 8 }) }),
    run: (c, a) => col(c).update(val(a.id, c.root) as string, (a.whole ? val(a.whole, c.root) : fields(VALID_UPDATE[k], a.es, c.root)) as never),
  };
  OPS[`${k}.delete`] = {
    args: fc.record({ id: arg(FIRST_ID[k]), options: fc.option(recipe, { freq: 2 }), cascade: fc.boolean() }),
    run: (c, a) => col(c).delete(val(a.id, c.root) as string, a.options ? (val(a.options, c.root) as never) : { cascade: a.cascade }),
  };
  OPS[`${k}.get`] = { args: arg(FIRST_ID[k]), run: (c, a: Recipe) => col(c).get(val(a, c.root) as string) };
  OPS[`${k}.has`] = { args: arg(FIRST_ID[k]), run: (c, a: Recipe) => col(c).has(val(a, c.root) as string) };
  OPS[`${k}.list`] = { args: fc.constant(null), run: (c) => [col(c).list(), col(c).size] };
}

/** Operations that may change the workspace (then it is saved and read back). */
const CHANGES = /\.(create|update|delete)$|^bindDataset$|^save$/;

// ---------------------------------------------------------------- checks

const INTERNALS = [
  /Cannot read propert/, /is not a function/, /is not iterable/, /\bundefined\b/, /Cannot convert/, /Maximum call stack/,
  /Do not know how to serialize/, /circular structure/, /\n\s+at .+:\d+:\d+/, /\[object \w+\]/, /\bERR_[A-Z_]{4,}\b/,
];

function badRejection(e: unknown): string | null {
  if (!(e instanceof WorkspaceError)) return `failed with ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}, not a WorkspaceError`;
  if (!ERROR_CODES.includes(e.code)) return `code ${String(e.code)} is not in the catalogue`;
  if (!e.message.trim()) return 'empty message';
  for (const re of INTERNALS) if (re.test(e.message.slice(0, 2000))) return `message shows internals (${re}): ${e.message.slice(0, 300)}`;
  return null;
}

const protoKeys = () => [Object.getOwnPropertyNames(Object.prototype).sort().join(','), Object.getOwnPropertyNames(Array.prototype).sort().join(',')];

/** Every file under `dir` with its bytes' length and a sample, relative to `dir`. */
function files(dir: string, base = dir, out = new Map<string, string>()): Map<string, string> {
  if (!existsSync(dir)) return out;
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) {
      out.set(relative(base, p) + sep, '');
      files(p, base, out);
    } else out.set(relative(base, p), readFileSync(p).toString('base64'));
  }
  return out;
}

const sameFiles = (a: Map<string, string>, b: Map<string, string>) => a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

// ---------------------------------------------------------------- the test

let tmp: string;
let root: string;
let work: string;
let pristine: string;
let pristineBytes: Uint8Array;
let cwd: string;
let n = 0;
let cases = 0;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ragloom-fuzz-ws-'));
  root = join(tmp, 'root');
  work = join(root, 'a', 'b');
  mkdirSync(work, { recursive: true });
  pristine = join(tmp, 'pristine');
  const ws = await Workspace.open(pristine);
  ws.datasets.create({ name: 'cats', type: 'classification' });
  ws.datasets.create({ name: 'boxes', type: 'detection_voc' });
  ws.projects.create({ name: 'classify', type: 'classification', did: 'D0001' });
  ws.projects.create({ name: 'detect', type: 'detection' });
  ws.tasks.create({ pid: 'P0001' });
  ws.tasks.create({ pid: 'P0001', parent_id: 'T0001' });
  ws.pretrainedModels.create({ name: 'pm', model: 'ResNet50', pid: 'P0001', tid: 'T0001' });
  ws.exportedModels.create({ name: 'em', model: 'ResNet50', pid: 'P0001', tid: 'T0002', path: join(tmp, 'exported', 'em1') });
  await ws.save();
  pristineBytes = ws.encode();
  // Relative record paths resolve against the working directory: the folders live there.
  cwd = process.cwd();
  try {
    process.chdir(work);
  } catch {
    /* a worker thread cannot chdir */
  }
}, 60_000);

afterAll(async () => {
  try {
    process.chdir(cwd);
  } catch {
    /* see beforeAll */
  }
  if (tmp) await rm(tmp, { recursive: true, force: true });
  console.log(`fuzz-workspace: ${cases} fuzz cases over ${Object.keys(OPS).length} operations, seed ${SEED}, ${RUNS} runs per operation`);
});

describe('fuzzed inputs: every workspace operation', () => {
  it('covers every public method of Workspace and Collection', () => {
    const methods = (o: object) => Object.getOwnPropertyNames(o).filter((k) => k !== 'constructor' && typeof Object.getOwnPropertyDescriptor(o, k)?.value === 'function');
    const getters = (o: object) => Object.getOwnPropertyNames(o).filter((k) => typeof Object.getOwnPropertyDescriptor(o, k)?.get === 'function');
    for (const m of methods(Workspace)) expect(Object.keys(OPS)).toContain(`Workspace.${m}`);
    for (const m of methods(Workspace.prototype)) expect(Object.keys(OPS)).toContain(m);
    for (const g of getters(Workspace.prototype)) expect(['counters', 'version', 'currentTime']).toContain(g);
    for (const m of methods(Collection.prototype)) for (const k of KINDS) expect(Object.keys(OPS)).toContain(`${k}.${m}`);
    for (const g of getters(Collection.prototype)) expect(g).toBe('size');
  });

  Object.entries(OPS).forEach(([name, op], i) => {
    it(name, async () => {
      await fc.assert(
        fc.asyncProperty(op.args, async (a) => {
          cases++;
          const dir = join(work, `ws-${++n}`);
          cpSync(pristine, dir, { recursive: true });
          try {
            const ws = await Workspace.open(dir);
            const c: Ctx = { ws, dir, root, pristineBytes };
            const bytesBefore = ws.encode();
            const filesBefore = files(dir);
            const treeBefore = [...files(root).keys()].filter((p) => !p.startsWith(`${relative(root, dir)}`));
            const before = protoKeys();
            let failure: unknown;
            try {
              await op.run(c, a);
            } catch (e) {
              failure = e;
            }
            expect(protoKeys(), 'no prototype gains keys').toEqual(before);
            expect(({} as Json).polluted).toBeUndefined();
            if (failure !== undefined) {
              const why = badRejection(failure);
              if (why) throw new Error(`${name}: ${why}`);
              if (name !== 'save') {
                expect(Buffer.from(ws.encode()).equals(Buffer.from(bytesBefore)), `${name}: rejected, but the workspace changed`).toBe(true);
                expect(sameFiles(files(dir), filesBefore), `${name}: rejected, but the folder changed`).toBe(true);
              }
            }
            // Whatever was accepted can be saved, inside the folder only, and reads back the same.
            // (A rejected or read-only call left nothing new to save: checked above.)
            const save = failure === undefined && CHANGES.test(name);
            let saveFailure: unknown;
            try {
              if (save) await ws.save();
            } catch (e) {
              saveFailure = e;
            }
            if (saveFailure !== undefined) {
              const why = badRejection(saveFailure);
              if (why) throw new Error(`${name}, then save(): ${why}`);
            }
            const treeAfter = [...files(root).keys()].filter((p) => !p.startsWith(`${relative(root, dir)}`));
            expect(treeAfter, 'nothing written outside the workspace folder').toEqual(treeBefore);
            if (existsSync('/etc/passwd')) expect(statSync('/etc/passwd').size).toBeGreaterThan(0);
            if (save && saveFailure === undefined) {
              const again = await Workspace.open(dir);
              expect(Buffer.from(again.encode()).equals(Buffer.from(ws.encode())), `${name}: the saved folder reads back differently`).toBe(true);
            }
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        }),
        { numRuns: RUNS, seed: SEED + i, endOnFailure: true },
      );
    });
  });
});
