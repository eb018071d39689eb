import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  COMPATIBLE_PROJECT_TYPES,
  DATASET_TYPES,
  PROJECT_TYPES,
  Workspace,
  WorkspaceError,
  workspaceFromJSON,
  type WorkspaceErrorCode,
} from '../../src/workspace/index.js';
import { bytes, entry, int, str } from './wire.js';

let dir: string;
let ws: Workspace;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ragloom-ws-rules-'));
  ws = await Workspace.open(dir);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The call throws WorkspaceError `code` and the encoded workspace is byte-for-byte unchanged. */
function violates(code: WorkspaceErrorCode, fn: () => unknown, w: Workspace = ws): WorkspaceError {
  const before = w.encode();
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err, `expected WorkspaceError ${code}`).toBeInstanceOf(WorkspaceError);
  expect((err as WorkspaceError).code).toBe(code);
  expect((err as WorkspaceError).name).toBe('WorkspaceError');
  expect(w.encode()).toEqual(before);
  return err as WorkspaceError;
}

/** A bound detection project with one task. */
function detectionSetup() {
  const ds = ws.datasets.create({ name: 'voc', type: 'detection_voc' });
  const pj = ws.projects.create({ name: 'det', type: 'detection' });
  ws.bindDataset(pj.id, ds.id);
  const task = ws.tasks.create({ pid: pj.id });
  return { ds, pj, task };
}

describe('ids, counters and times', () => {
  it('numbers each kind from its own counter with its prefix', () => {
    const { ds, pj, task } = detectionSetup();
    const pm = ws.pretrainedModels.create({ name: 'pm', pid: pj.id, tid: task.id });
    const em = ws.exportedModels.create({ name: 'em', pid: pj.id, tid: task.id, path: '/tmp/em' });
    expect([ds.id, pj.id, task.id, pm.id, em.id]).toEqual(['D0001', 'P0001', 'T0001', 'PM0001', 'EM0001']);
    expect(ws.counters).toEqual({ max_dataset_id: 1, max_project_id: 1, max_task_id: 1, max_pretrained_model_id: 1, max_exported_model_id: 1 });
  });

  it('never reuses an id after a delete; counters only grow', () => {
    const a = ws.datasets.create({ name: 'a', type: 'classification' });
    ws.datasets.delete(a.id);
    const b = ws.datasets.create({ name: 'b', type: 'classification' });
    expect(b.id).toBe('D0002');
    expect(ws.counters.max_dataset_id).toBe(2);
  });

  it('switches from zero-padded to plain numbers at 10000', () => {
    const w = Workspace.fromJSON({ max_dataset_id: 9998, max_task_id: 12345 }, dir);
    expect(w.datasets.create({ name: 'a', type: 'classification' }).id).toBe('D9999');
    expect(w.datasets.create({ name: 'b', type: 'classification' }).id).toBe('D10000');
  });

  it('skips ids a hand-edited file already holds instead of failing', () => {
    const w = Workspace.fromBytes(bytes(entry(3, 'D0002', [...str(1, 'D0002'), ...str(4, 'classification')]), int(6, 1)), dir);
    expect(w.datasets.create({ name: 'n', type: 'segmentation' }).id).toBe('D0003');
    expect(w.counters.max_dataset_id).toBe(3);
  });

  it('stamps create_time as local YYYY-MM-DD HH:MM:SS', () => {
    const before = Date.now();
    const d = ws.datasets.create({ name: 'a', type: 'classification' });
    expect(d.create_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const [date, time] = d.create_time.split(' ') as [string, string];
    const [y, mo, da] = date.split('-').map(Number) as [number, number, number];
    const [h, mi, s] = time.split(':').map(Number) as [number, number, number];
    const local = new Date(y, mo - 1, da, h, mi, s).getTime();
    expect(Math.abs(local - before)).toBeLessThan(5000);
  });

  it('gives default paths as PaddleX lays them out', () => {
    const { ds, pj, task } = detectionSetup();
    const pm = ws.pretrainedModels.create({ name: 'pm', pid: pj.id, tid: task.id });
    expect(ds.path).toBe(join(dir, 'datasets', 'D0001'));
    expect(pj.path).toBe(join(dir, 'projects', 'P0001'));
    expect(task.path).toBe(join(dir, 'projects', 'P0001', 'T0001'));
    expect(pm.path).toBe(join(dir, 'pretrain', 'PM0001'));
  });

  it('a new workspace has version 0.2.0 and path = the folder', () => {
    expect(ws.version).toBe('0.2.0');
    expect(ws.toJSON().path).toBe(dir);
    expect(ws.dir).toBe(dir);
  });
});

describe('Collection basics', () => {
  it('get() returns undefined for an unknown id; update/delete throw NOT_FOUND', () => {
    expect(ws.datasets.get('D0001')).toBeUndefined();
    violates('NOT_FOUND', () => ws.datasets.update('D0001', { name: 'x' }));
    violates('NOT_FOUND', () => ws.projects.delete('P0404'));
    violates('NOT_FOUND', () => ws.exportedModels.delete('EM0001'));
  });

  it('hands out copies: editing a returned record changes nothing', () => {
    const d = ws.datasets.create({ name: 'a', type: 'classification' });
    d.name = 'changed';
    (ws.datasets.get(d.id) as { type: string }).type = 'bogus';
    ws.datasets.list()[0]!.desc = 'x';
    expect(ws.datasets.get(d.id)).toEqual({ ...d, name: 'a' });
  });

  it('list(), size and has()', () => {
    ws.datasets.create({ name: 'a', type: 'classification' });
    ws.datasets.create({ name: 'b', type: 'segmentation' });
    expect(ws.datasets.list().map((d) => d.name)).toEqual(['a', 'b']);
    expect(ws.datasets.size).toBe(2);
    expect(ws.datasets.has('D0002')).toBe(true);
    expect(ws.datasets.has('D0003')).toBe(false);
  });

  it('update() changes allowed fields and returns the record', () => {
    const d = ws.datasets.create({ name: 'a', type: 'classification' });
    expect(ws.datasets.update(d.id, { name: 'b', desc: 'hello' })).toEqual({ ...d, name: 'b', desc: 'hello' });
    expect(ws.datasets.get(d.id)?.desc).toBe('hello');
  });
});

describe('field checks', () => {
  it('dataset create needs name and type', () => {
    violates('MISSING_FIELD', () => ws.datasets.create({ type: 'classification' } as never));
    violates('MISSING_FIELD', () => ws.datasets.create({ name: 'x' } as never));
    violates('INVALID_VALUE', () => ws.datasets.create({ name: '  ', type: 'classification' }));
  });
  it('refuses unknown and read-only fields', () => {
    const e = violates('UNKNOWN_FIELD', () => ws.datasets.create({ name: 'x', type: 'classification', colour: 'red' } as never));
    expect(e.message).toContain('"colour"');
    violates('READ_ONLY_FIELD', () => ws.datasets.create({ name: 'x', type: 'classification', id: 'D0042' } as never));
    violates('READ_ONLY_FIELD', () => ws.datasets.create({ name: 'x', type: 'classification', create_time: 'now' } as never));
    const d = ws.datasets.create({ name: 'x', type: 'classification' });
    violates('READ_ONLY_FIELD', () => ws.datasets.update(d.id, { id: 'D0009' } as never));
  });
  it('refuses values of the wrong type', () => {
    violates('INVALID_VALUE', () => ws.datasets.create({ name: 42, type: 'classification' } as never));
    violates('INVALID_VALUE', () => ws.datasets.create(null as never));
    violates('INVALID_VALUE', () => ws.datasets.create('D' as never));
  });
  it('resolves a relative path against the working directory', () => {
    const d = ws.datasets.create({ name: 'x', type: 'classification', path: 'rel/dir' });
    expect(d.path).toBe(join(process.cwd(), 'rel/dir'));
    violates('INVALID_VALUE', () => ws.datasets.update(d.id, { path: '' }));
  });
});

describe('dataset types', () => {
  it.each(DATASET_TYPES)('accepts %s', (type) => {
    expect(ws.datasets.create({ name: 'x', type }).type).toBe(type);
  });

  it.each(['detection', 'instance_segmentation', 'remote_segmentation', 'voc', ''])('refuses %j at creation', (type) => {
    const code = type === '' ? 'MISSING_FIELD' : 'INVALID_DATASET_TYPE';
    const e = violates(code, () => ws.datasets.create({ name: 'x', type }));
    if (type === 'detection') expect(e.message).toContain('detection_voc');
  });

  it("reads PaddleX's running-code names and maps them, but writes the file's spelling back", () => {
    const ds = (id: string, type: string) => entry(3, id, [...str(1, id), ...str(4, type)]);
    const parts = [ds('D0001', 'detection'), ds('D0002', 'instance_segmentation'), ds('D0003', 'remote_segmentation'), ds('D0004', 'classification'), int(6, 4)];
    const w = Workspace.fromBytes(bytes(...parts), '/w');
    expect(w.datasets.list().map((d) => d.type)).toEqual(['detection_voc', 'detection_coco', 'segmentation', 'classification']);
    expect(w.encode()).toEqual(bytes(str(1, '0.2.0'), str(2, '/w'), ...parts));
    // A changed type is written in ragloom's names.
    w.datasets.update('D0001', { type: 'detection_coco' });
    expect(Workspace.decode(w.encode()).datasets.D0001?.type).toBe('detection_coco');
    // The mapped type is what binding checks.
    const pj = w.projects.create({ name: 'p', type: 'instance_segmentation' });
    w.bindDataset(pj.id, 'D0002');
  });
});

describe('project types and binding', () => {
  it.each(PROJECT_TYPES)('accepts project type %s', (type) => {
    expect(ws.projects.create({ name: 'p', type }).did).toBe('');
  });
  it('refuses an unknown project type', () => {
    violates('INVALID_PROJECT_TYPE', () => ws.projects.create({ name: 'p', type: 'detection_voc' }));
    violates('MISSING_FIELD', () => ws.projects.create({ name: 'p' } as never));
  });

  const pairs = DATASET_TYPES.flatMap((d) => PROJECT_TYPES.map((p) => [d, p] as const));
  it.each(pairs)('binds a %s dataset to a %s project only if the table allows it', (dt, pt) => {
    const ds = ws.datasets.create({ name: 'd', type: dt });
    const pj = ws.projects.create({ name: 'p', type: pt });
    const ok = (COMPATIBLE_PROJECT_TYPES[dt] as readonly string[]).includes(pt);
    if (ok) expect(ws.bindDataset(pj.id, ds.id).did).toBe(ds.id);
    else violates('TYPE_MISMATCH', () => ws.bindDataset(pj.id, ds.id));
  });

  it('the table is the one of the issue', () => {
    expect(COMPATIBLE_PROJECT_TYPES).toEqual({
      classification: ['classification'],
      segmentation: ['segmentation', 'remote_segmentation'],
      detection_voc: ['detection'],
      detection_coco: ['detection', 'segmentation', 'instance_segmentation'],
    });
  });

  it('binding checks that both records exist', () => {
    const ds = ws.datasets.create({ name: 'd', type: 'classification' });
    const pj = ws.projects.create({ name: 'p', type: 'classification' });
    violates('NOT_FOUND', () => ws.bindDataset('P0404', ds.id));
    violates('NOT_FOUND', () => ws.bindDataset(pj.id, 'D0404'));
    violates('INVALID_VALUE', () => ws.bindDataset(pj.id, ''));
    violates('NOT_FOUND', () => ws.projects.update(pj.id, { did: 'D0404' }));
  });

  it('binding at creation goes through the same checks', () => {
    const ds = ws.datasets.create({ name: 'd', type: 'segmentation' });
    violates('TYPE_MISMATCH', () => ws.projects.create({ name: 'p', type: 'detection', did: ds.id }));
    violates('NOT_FOUND', () => ws.projects.create({ name: 'p', type: 'segmentation', did: 'D0404' }));
    expect(ws.counters.max_project_id).toBe(0);
    expect(ws.projects.create({ name: 'p', type: 'segmentation', did: ds.id }).did).toBe(ds.id);
  });

  it('a dataset type change must still fit the projects bound to it', () => {
    const { ds } = detectionSetup();
    violates('TYPE_MISMATCH', () => ws.datasets.update(ds.id, { type: 'classification' }));
    violates('INVALID_DATASET_TYPE', () => ws.datasets.update(ds.id, { type: 'detection' }));
    expect(ws.datasets.update(ds.id, { type: 'detection_coco' }).type).toBe('detection_coco');
  });

  it('a project type cannot change once it has tasks, and must fit its dataset', () => {
    const { pj } = detectionSetup();
    violates('TYPE_LOCKED', () => ws.projects.update(pj.id, { type: 'segmentation' }));
    const ds2 = ws.datasets.create({ name: 'coco', type: 'detection_coco' });
    const p2 = ws.projects.create({ name: 'p2', type: 'detection', did: ds2.id });
    violates('TYPE_MISMATCH', () => ws.projects.update(p2.id, { type: 'classification' }));
    violates('INVALID_PROJECT_TYPE', () => ws.projects.update(p2.id, { type: 'nope' }));
    expect(ws.projects.update(p2.id, { type: 'instance_segmentation' }).type).toBe('instance_segmentation');
  });

  it('update({ did: "" }) unbinds', () => {
    const { ds, pj } = detectionSetup();
    expect(ws.projects.update(pj.id, { did: '' }).did).toBe('');
    expect(ws.datasets.delete(ds.id).deleted).toEqual([ds.id]);
  });
});

describe('dataset delete', () => {
  it('is refused while a project uses the dataset', () => {
    const { ds, pj } = detectionSetup();
    const e = violates('DATASET_IN_USE', () => ws.datasets.delete(ds.id));
    expect(e.message).toContain(pj.id);
    violates('DATASET_IN_USE', () => ws.datasets.delete(ds.id, { cascade: true }));
    ws.projects.delete(pj.id);
    expect(ws.datasets.delete(ds.id)).toEqual({ deleted: [ds.id], orphanedModels: [] });
    expect(ws.datasets.get(ds.id)).toBeUndefined();
  });
});

describe('tasks', () => {
  it('need an existing project bound to an existing dataset', () => {
    violates('MISSING_FIELD', () => ws.tasks.create({} as never));
    violates('NOT_FOUND', () => ws.tasks.create({ pid: 'P0404' }));
    const pj = ws.projects.create({ name: 'p', type: 'classification' });
    violates('PROJECT_NOT_BOUND', () => ws.tasks.create({ pid: pj.id }));
    expect(ws.counters.max_task_id).toBe(0);
  });

  it('refuse a project whose bound dataset is gone or does not fit (as loaded from a file)', () => {
    const pjBody = (id: string, type: string, did: string) => entry(4, id, [...str(1, id), ...str(4, type), ...str(5, did), ...str(6, `/w/projects/${id}`)]);
    const file = bytes(entry(3, 'D0001', [...str(1, 'D0001'), ...str(4, 'classification')]), pjBody('P0001', 'detection', 'D0009'), pjBody('P0002', 'detection', 'D0001'), int(6, 1), int(7, 2));
    const w = Workspace.fromBytes(file, '/w');
    violates('PROJECT_NOT_BOUND', () => w.tasks.create({ pid: 'P0001' }), w);
    violates('TYPE_MISMATCH', () => w.tasks.create({ pid: 'P0002' }), w);
    expect(w.check().map((i) => i.message)).toEqual([
      'bound dataset D0009 does not exist',
      'bound dataset D0001 (classification) does not fit type detection',
    ]);
  });

  it('parent_id must name an existing task of the same project', () => {
    const { pj, task } = detectionSetup();
    violates('INVALID_PARENT', () => ws.tasks.create({ pid: pj.id, parent_id: 'T0404' }));
    const ds2 = ws.datasets.create({ name: 'd2', type: 'detection_voc' });
    const other = ws.projects.create({ name: 'other', type: 'detection', did: ds2.id });
    const e = violates('INVALID_PARENT', () => ws.tasks.create({ pid: other.id, parent_id: task.id }));
    expect(e.message).toContain(pj.id);
    const child = ws.tasks.create({ pid: pj.id, parent_id: task.id });
    expect(child.parent_id).toBe(task.id);
    expect(child.path).toBe(join(pj.path, child.id));
  });

  it('parent_id updates are checked too, including cycles', () => {
    const { pj, task } = detectionSetup();
    const child = ws.tasks.create({ pid: pj.id, parent_id: task.id });
    const grandchild = ws.tasks.create({ pid: pj.id, parent_id: child.id });
    violates('INVALID_PARENT', () => ws.tasks.update(task.id, { parent_id: grandchild.id }));
    violates('INVALID_PARENT', () => ws.tasks.update(task.id, { parent_id: task.id }));
    violates('INVALID_PARENT', () => ws.tasks.update(task.id, { parent_id: 'T0404' }));
    violates('READ_ONLY_FIELD', () => ws.tasks.update(task.id, { pid: 'P0002' } as never));
    expect(ws.tasks.update(grandchild.id, { parent_id: '' }).parent_id).toBe('');
    expect(ws.tasks.update(grandchild.id, { parent_id: task.id }).parent_id).toBe(task.id);
  });

  it('a task name may stay empty (PaddleX never sets it)', () => {
    const { pj } = detectionSetup();
    expect(ws.tasks.create({ pid: pj.id, name: '' }).name).toBe('');
  });

  it('a task with child prune tasks is deleted only with cascade', () => {
    const { pj, task } = detectionSetup();
    const child = ws.tasks.create({ pid: pj.id, parent_id: task.id });
    const grandchild = ws.tasks.create({ pid: pj.id, parent_id: child.id });
    const em = ws.exportedModels.create({ name: 'e', pid: pj.id, tid: grandchild.id, path: '/tmp/e' });
    violates('TASK_HAS_CHILDREN', () => ws.tasks.delete(task.id));
    expect(ws.tasks.delete(grandchild.id)).toEqual({ deleted: [grandchild.id], orphanedModels: [em.id] });
    const em2 = ws.exportedModels.create({ name: 'e2', pid: pj.id, tid: child.id, path: '/tmp/e2' });
    expect(ws.tasks.delete(task.id, { cascade: true })).toEqual({ deleted: [task.id, child.id, em2.id], orphanedModels: [] });
    expect(ws.tasks.list()).toEqual([]);
    expect(ws.exportedModels.list().map((m) => m.id)).toEqual([em.id]);
  });
});

describe('project delete', () => {
  it('deletes its tasks and reports the models that point at them', () => {
    const { pj, task } = detectionSetup();
    const child = ws.tasks.create({ pid: pj.id, parent_id: task.id });
    const pm = ws.pretrainedModels.create({ name: 'pm', pid: pj.id, tid: task.id });
    const em = ws.exportedModels.create({ name: 'em', pid: pj.id, tid: child.id, path: '/tmp/em' });
    const r = ws.projects.delete(pj.id);
    expect(r).toEqual({ deleted: [pj.id, task.id, child.id], orphanedModels: [pm.id, em.id] });
    expect(ws.tasks.size).toBe(0);
    expect(ws.pretrainedModels.get(pm.id)?.pid).toBe(pj.id);
    expect(ws.check().filter((i) => i.kind !== 'project').map((i) => `${i.id}: ${i.message}`)).toEqual([
      `${pm.id}: project ${pj.id} does not exist`,
      `${pm.id}: task ${task.id} does not exist`,
      `${em.id}: project ${pj.id} does not exist`,
      `${em.id}: task ${child.id} does not exist`,
    ]);
  });

  it('with cascade also deletes those models', () => {
    const { pj, task, ds } = detectionSetup();
    const pm = ws.pretrainedModels.create({ name: 'pm', pid: pj.id, tid: task.id });
    const em = ws.exportedModels.create({ name: 'em', pid: pj.id, tid: task.id, path: '/tmp/em' });
    expect(ws.projects.delete(pj.id, { cascade: true })).toEqual({ deleted: [pj.id, task.id, pm.id, em.id], orphanedModels: [] });
    expect(ws.pretrainedModels.size + ws.exportedModels.size).toBe(0);
    expect(ws.datasets.get(ds.id)).toBeDefined();
    expect(ws.check()).toEqual([]);
  });

  it('leaves models of other projects alone', () => {
    const { pj, task } = detectionSetup();
    const ds2 = ws.datasets.create({ name: 'd2', type: 'detection_voc' });
    const p2 = ws.projects.create({ name: 'p2', type: 'detection', did: ds2.id });
    const t2 = ws.tasks.create({ pid: p2.id });
    const keep = ws.exportedModels.create({ name: 'keep', pid: p2.id, tid: t2.id, path: '/tmp/k' });
    ws.exportedModels.create({ name: 'go', pid: pj.id, tid: task.id, path: '/tmp/g' });
    ws.projects.delete(pj.id, { cascade: true });
    expect(ws.exportedModels.list().map((m) => m.id)).toEqual([keep.id]);
    expect(ws.tasks.list().map((t) => t.id)).toEqual([t2.id]);
  });
});

describe('models', () => {
  it('need an existing project and a task of that project', () => {
    const { pj, task } = detectionSetup();
    violates('NOT_FOUND', () => ws.pretrainedModels.create({ name: 'm', pid: 'P0404', tid: task.id }));
    violates('NOT_FOUND', () => ws.pretrainedModels.create({ name: 'm', pid: pj.id, tid: 'T0404' }));
    violates('MISSING_FIELD', () => ws.pretrainedModels.create({ name: 'm', pid: pj.id } as never));
    const ds2 = ws.datasets.create({ name: 'd2', type: 'classification' });
    const p2 = ws.projects.create({ name: 'p2', type: 'classification', did: ds2.id });
    violates('TASK_PROJECT_MISMATCH', () => ws.exportedModels.create({ name: 'm', pid: p2.id, tid: task.id, path: '/tmp/m' }));
    expect(ws.counters.max_exported_model_id).toBe(0);
  });

  it('take their type from the project; type is read-only', () => {
    const { pj, task } = detectionSetup();
    violates('READ_ONLY_FIELD', () => ws.pretrainedModels.create({ name: 'm', pid: pj.id, tid: task.id, type: 'detection' } as never));
    const pm = ws.pretrainedModels.create({ name: 'm', pid: pj.id, tid: task.id, model: 'FasterRCNN-ResNet18-WITH_FPN' });
    expect(pm.type).toBe('detection');
    violates('READ_ONLY_FIELD', () => ws.pretrainedModels.update(pm.id, { type: 'x' } as never));
  });

  it('an exported model needs its path and an exported_type of 0 or 1', () => {
    const { pj, task } = detectionSetup();
    violates('MISSING_FIELD', () => ws.exportedModels.create({ name: 'm', pid: pj.id, tid: task.id } as never));
    violates('INVALID_VALUE', () => ws.exportedModels.create({ name: 'm', pid: pj.id, tid: task.id, path: '/tmp/m', exported_type: 2 }));
    violates('INVALID_VALUE', () => ws.exportedModels.create({ name: 'm', pid: pj.id, tid: task.id, path: '/tmp/m', exported_type: '1' as never }));
    expect(ws.exportedModels.create({ name: 'm', pid: pj.id, tid: task.id, path: '/tmp/m' }).exported_type).toBe(0);
    violates('UNKNOWN_FIELD', () => ws.pretrainedModels.create({ name: 'm', pid: pj.id, tid: task.id, exported_type: 1 } as never));
  });

  it('re-pointing a model checks the new owner and takes its type', () => {
    const { pj, task } = detectionSetup();
    const em = ws.exportedModels.create({ name: 'm', pid: pj.id, tid: task.id, path: '/tmp/m' });
    const ds2 = ws.datasets.create({ name: 'd2', type: 'classification' });
    const p2 = ws.projects.create({ name: 'p2', type: 'classification', did: ds2.id });
    const t2 = ws.tasks.create({ pid: p2.id });
    violates('TASK_PROJECT_MISMATCH', () => ws.exportedModels.update(em.id, { pid: p2.id }));
    const moved = ws.exportedModels.update(em.id, { pid: p2.id, tid: t2.id });
    expect(moved.type).toBe('classification');
    violates('TYPE_LOCKED', () => ws.projects.update(p2.id, { type: 'detection' }));
  });

  it('deleting a model removes only that record', () => {
    const { pj, task } = detectionSetup();
    const pm = ws.pretrainedModels.create({ name: 'm', pid: pj.id, tid: task.id });
    expect(ws.pretrainedModels.delete(pm.id, { cascade: true })).toEqual({ deleted: [pm.id], orphanedModels: [] });
    expect(ws.tasks.size).toBe(1);
  });
});

describe('check()', () => {
  it('reports what PaddleX allows and ragloom would refuse', () => {
    const file = workspaceFromJSON({
      datasets: { D0001: { id: 'D0009', type: 'pictures' } },
      projects: { P0001: { id: 'P0001', type: 'odd' } },
      tasks: { T0001: { id: 'T0001', pid: 'P0404' }, T0002: { id: 'T0002', pid: 'P0001', parent_id: 'T0001' } },
      max_dataset_id: 0,
      max_project_id: 1,
      max_task_id: 2,
    });
    const w = Workspace.fromJSON(file, '/w');
    expect(w.check().map((i) => `${i.kind} ${i.id}: ${i.message}`)).toEqual([
      'dataset D0001: map key D0001 holds a record with id "D0009"',
      'dataset : counter max_dataset_id = 0 is below the largest id number 1',
      'dataset D0009: unknown dataset type "pictures"',
      'project P0001: unknown project type "odd"',
      'task T0001: project P0404 does not exist',
      'task T0002: parent task T0001 belongs to project P0404',
    ]);
  });
});
