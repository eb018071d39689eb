import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Workspace,
  WorkspaceError,
  decodeRecord,
  encodeRecord,
  workspaceFromJSON,
  type Dataset,
  type ExportedModel,
} from '../../src/workspace/index.js';
import { bytes, entry, int, str, tag, varint } from './wire.js';

const T0 = '2021-03-04 15:07:09';
const dataset: Dataset = {
  id: 'D0001',
  name: '昆虫检测',
  desc: '',
  type: 'detection_voc',
  path: '/w/datasets/D0001',
  create_time: T0,
};
// desc is "" so, with proto3 implicit presence, field 3 is absent.
const datasetBody = [...str(1, 'D0001'), ...str(2, '昆虫检测'), ...str(4, 'detection_voc'), ...str(5, '/w/datasets/D0001'), ...str(6, T0)];

const exported: ExportedModel = {
  id: 'EM0003',
  name: 'yolo',
  model: 'YOLOv3-DarkNet53',
  type: 'detection',
  pid: 'P0001',
  tid: 'T0002',
  create_time: T0,
  path: '/out/yolo',
  exported_type: 1,
};
const exportedBody = [
  ...str(1, 'EM0003'), ...str(2, 'yolo'), ...str(3, 'YOLOv3-DarkNet53'), ...str(4, 'detection'),
  ...str(5, 'P0001'), ...str(6, 'T0002'), ...str(7, T0), ...str(8, '/out/yolo'), ...int(9, 1),
];

const workspaceBody = [
  ...str(1, '0.2.0'),
  ...str(2, '/w'),
  ...entry(3, 'D0001', datasetBody),
  ...int(6, 1),
  ...str(9, T0),
];

describe('wire helper', () => {
  it('writes the literal bytes of the protobuf encoding guide', () => {
    expect(varint(1)).toEqual([0x01]);
    expect(varint(150)).toEqual([0x96, 0x01]);
    expect(varint(-1)).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    expect(tag(99, 2)).toEqual([0x9a, 0x06]);
    expect(str(1, 'D1')).toEqual([0x0a, 0x02, 0x44, 0x31]);
    expect(entry(3, 'k', [])).toEqual([0x1a, 0x05, 0x0a, 0x01, 0x6b, 0x12, 0x00]);
  });
});

describe('Dataset codec', () => {
  it('encodes to the hand-built bytes', () => {
    expect(encodeRecord('dataset', dataset)).toEqual(bytes(datasetBody));
  });
  it('decodes the hand-built bytes, absent fields as ""', () => {
    expect(decodeRecord('dataset', bytes(datasetBody))).toEqual(dataset);
  });
  it('reads fields in any order and writes them in field-number order', () => {
    const shuffled = bytes(str(6, T0), str(4, 'detection_voc'), str(1, 'D0001'), str(5, '/w/datasets/D0001'), str(2, '昆虫检测'));
    const rec = decodeRecord('dataset', shuffled);
    expect(encodeRecord('dataset', rec)).toEqual(bytes(datasetBody));
  });
  it('keeps the last value of a repeated scalar, as protoc does', () => {
    expect(decodeRecord('dataset', bytes(str(2, 'a'), str(2, 'b'))).name).toBe('b');
  });
  it('leaves out empty strings entirely', () => {
    const empty = { id: '', name: '', desc: '', type: '', path: '', create_time: '' };
    expect(encodeRecord('dataset', empty)).toEqual(new Uint8Array(0));
    expect(decodeRecord('dataset', new Uint8Array(0))).toEqual(empty);
  });
});

describe('ExportedModel codec', () => {
  it('encodes exported_type as a varint field 9', () => {
    expect(encodeRecord('exported_model', exported)).toEqual(bytes(exportedBody));
    expect(decodeRecord('exported_model', bytes(exportedBody))).toEqual(exported);
  });
  it('leaves exported_type 0 out and reads a missing one as 0', () => {
    const zero = { ...exported, exported_type: 0 };
    expect(encodeRecord('exported_model', zero)).toEqual(bytes(exportedBody.slice(0, -2)));
    expect(decodeRecord('exported_model', bytes(exportedBody.slice(0, -2))).exported_type).toBe(0);
  });
  it('reads a negative int32 written as a 10-byte varint', () => {
    const neg = bytes(str(1, 'EM0001'), int(9, -1));
    expect(decodeRecord('exported_model', neg).exported_type).toBe(-1);
    expect(encodeRecord('exported_model', decodeRecord('exported_model', neg))).toEqual(neg);
  });
});

describe('Workspace codec', () => {
  it('Workspace.decode() reads one dataset map entry and the counters', () => {
    const m = Workspace.decode(bytes(workspaceBody));
    expect(m).toEqual({
      version: '0.2.0',
      path: '/w',
      datasets: { D0001: dataset },
      projects: {},
      tasks: {},
      max_dataset_id: 1,
      max_project_id: 0,
      max_task_id: 0,
      current_time: T0,
      max_pretrained_model_id: 0,
      pretrained_models: {},
      max_exported_model_id: 0,
      exported_models: {},
    });
  });

  it('Workspace.encode() writes the hand-built bytes back', () => {
    expect(Workspace.encode(Workspace.decode(bytes(workspaceBody)))).toEqual(bytes(workspaceBody));
    expect(Workspace.fromBytes(bytes(workspaceBody), '/w').encode()).toEqual(bytes(workspaceBody));
  });

  it('writes every map and counter with its field number', () => {
    const pj = [...str(1, 'P0001'), ...str(2, 'p'), ...str(4, 'detection'), ...str(5, 'D0001'), ...str(6, '/w/projects/P0001'), ...str(7, T0)];
    const tk = [...str(1, 'T0002'), ...str(4, 'P0001'), ...str(5, '/w/projects/P0001/T0002'), ...str(6, T0), ...str(7, 'T0001')];
    const pm = [...str(1, 'PM0001'), ...str(2, 'pre'), ...str(4, 'detection'), ...str(5, 'P0001'), ...str(6, 'T0002'), ...str(7, T0), ...str(8, '/w/pretrain/PM0001')];
    const all = bytes(
      str(1, '0.2.0'), str(2, '/w'),
      entry(3, 'D0001', datasetBody),
      entry(4, 'P0001', pj),
      entry(5, 'T0002', tk),
      int(6, 1), int(7, 1), int(8, 2),
      str(9, T0),
      int(10, 1), entry(11, 'PM0001', pm),
      int(12, 3), entry(13, 'EM0003', exportedBody),
    );
    const m = Workspace.decode(all);
    expect(m.projects.P0001?.did).toBe('D0001');
    expect(m.tasks.T0002?.parent_id).toBe('T0001');
    expect(m.pretrained_models.PM0001?.path).toBe('/w/pretrain/PM0001');
    expect(m.exported_models.EM0003).toEqual(exported);
    expect([m.max_task_id, m.max_pretrained_model_id, m.max_exported_model_id]).toEqual([2, 1, 3]);
    expect(Workspace.encode(m)).toEqual(all);
  });

  it('writes map entries in insertion order, key = 1 and value = 2', () => {
    const d2 = { ...dataset, id: 'D0002', name: 'b' };
    const m = Workspace.decode(bytes(workspaceBody));
    m.datasets = { D0002: d2, D0001: dataset };
    const d2Body = [...str(1, 'D0002'), ...str(2, 'b'), ...datasetBody.slice(str(1, 'D0001').length + str(2, '昆虫检测').length)];
    expect(Workspace.encode(m)).toEqual(
      bytes(str(1, '0.2.0'), str(2, '/w'), entry(3, 'D0002', d2Body), entry(3, 'D0001', datasetBody), int(6, 1), str(9, T0)),
    );
  });

  it('an empty workspace is zero bytes', () => {
    expect(Workspace.encode(workspaceFromJSON({}))).toEqual(new Uint8Array(0));
  });

  it('ws.encode() of records made through the API equals the hand-built bytes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ragloom-ws-codec-'));
    try {
      const ws = await Workspace.open(dir);
      const ds = ws.datasets.create({ name: 'cats', type: 'classification', desc: 'tabby' });
      const expected = bytes(
        str(1, '0.2.0'),
        str(2, dir),
        entry(3, 'D0001', [...str(1, 'D0001'), ...str(2, 'cats'), ...str(3, 'tabby'), ...str(4, 'classification'), ...str(5, join(dir, 'datasets', 'D0001')), ...str(6, ds.create_time)]),
        int(6, 1),
      );
      expect(ws.encode()).toEqual(expected);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('unknown fields', () => {
  // Field 99 as a string, field 100 as a varint, field 101 as fixed64, field 102 as fixed32.
  const unknown = [...str(99, 'from the future'), ...int(100, 300), ...tag(101, 1), 1, 2, 3, 4, 5, 6, 7, 8, ...tag(102, 5), 9, 8, 7, 6];

  it('survive Dataset decode → encode', () => {
    const b = bytes(datasetBody, unknown);
    const rec = decodeRecord('dataset', b);
    expect(rec).toEqual(dataset); // not visible as fields
    expect(encodeRecord('dataset', rec)).toEqual(b);
  });

  it('survive Workspace decode → encode, at the top and inside a map value', () => {
    const b = bytes(str(1, '0.2.0'), str(2, '/w'), entry(3, 'D0001', [...datasetBody, ...unknown]), int(6, 1), str(9, T0), unknown);
    expect(Workspace.encode(Workspace.decode(b))).toEqual(b);
    expect(Workspace.fromBytes(b, '/w').encode()).toEqual(b);
  });

  it('survive an update of the record that holds them', () => {
    const b = bytes(str(1, '0.2.0'), str(2, '/w'), entry(3, 'D0001', [...datasetBody, ...unknown]), int(6, 1), unknown);
    const ws = Workspace.fromBytes(b, '/w');
    ws.datasets.update('D0001', { desc: 'x' });
    const withDesc = [...datasetBody.slice(0, str(1, 'D0001').length + str(2, '昆虫检测').length), ...str(3, 'x'), ...datasetBody.slice(str(1, 'D0001').length + str(2, '昆虫检测').length)];
    expect(ws.encode()).toEqual(bytes(str(1, '0.2.0'), str(2, '/w'), entry(3, 'D0001', [...withDesc, ...unknown]), int(6, 1), unknown));
  });

  it('a known field number with the wrong wire type is kept as unknown', () => {
    const b = bytes(datasetBody, int(2, 5));
    const rec = decodeRecord('dataset', b);
    expect(rec.name).toBe('昆虫检测');
    expect(encodeRecord('dataset', rec)).toEqual(b);
  });
});

describe('JSON form', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ragloom-ws-json-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('toJSON() → fromJSON() gives the same bytes', async () => {
    const ws = await Workspace.open(dir);
    const d = ws.datasets.create({ name: 'd', type: 'detection_coco' });
    const p = ws.projects.create({ name: 'p', type: 'instance_segmentation', did: d.id });
    const t = ws.tasks.create({ pid: p.id, desc: 'first' });
    ws.exportedModels.create({ name: 'e', pid: p.id, tid: t.id, path: join(dir, 'out'), exported_type: 1 });
    const text = JSON.stringify(ws);
    expect(JSON.parse(text).projects[p.id].did).toBe(d.id);
    expect(Workspace.fromJSON(text, dir).encode()).toEqual(ws.encode());
  });

  it('accepts lowerCamelCase names and int32 as strings, as protobuf JSON does', () => {
    const m = workspaceFromJSON({ maxDatasetId: '7', currentTime: T0, exportedModels: { EM0001: { id: 'EM0001', exportedType: 1 } } });
    expect(m.max_dataset_id).toBe(7);
    expect(m.current_time).toBe(T0);
    expect(m.exported_models.EM0001?.exported_type).toBe(1);
  });

  it.each([
    [{ bogus: 1 }, 'no field "bogus"'],
    [{ max_dataset_id: 1.5 }, 'is not an int32'],
    [{ max_dataset_id: 2 ** 31 }, 'is not an int32'],
    [{ version: 2 }, 'is not a string'],
    [{ datasets: [] }, 'is not an object'],
    ['{not json', 'JSON'],
  ])('refuses %j with INVALID_MESSAGE', (input, text) => {
    const err = (() => {
      try {
        workspaceFromJSON(input as object);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(WorkspaceError);
    expect((err as WorkspaceError).code).toBe('INVALID_MESSAGE');
    expect((err as WorkspaceError).message).toContain(text);
  });
});

describe('bad bytes', () => {
  it.each([
    ['a truncated string', bytes([0x0a, 0x05, 0x44])],
    ['a truncated map entry', bytes([0x1a, 0x09, 0x0a, 0x01])],
    ['an invalid wire type', bytes([0x0f])],
  ])('%s throws CORRUPT_FILE', (_, b) => {
    expect(() => Workspace.decode(b)).toThrow(expect.objectContaining({ name: 'WorkspaceError', code: 'CORRUPT_FILE' }));
  });

  it('Workspace.encode() refuses a field of the wrong type with INVALID_MESSAGE', () => {
    const m = Workspace.decode(bytes(workspaceBody));
    (m as unknown as Record<string, unknown>).max_task_id = 'three';
    expect(() => Workspace.encode(m)).toThrow(expect.objectContaining({ code: 'INVALID_MESSAGE' }));
  });
});
