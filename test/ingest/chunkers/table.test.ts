import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../src/ingest/chunkers/index.js';
import { ctx, doc, tableBlock, txt } from './helpers.js';

const table = (d: Parameters<typeof chunkDocument>[1], pc: Record<string, unknown> = {}) => chunkDocument('table', d, ctx(pc));

describe('table', () => {
  it('makes each row a chunk of "- column: value" lines, skipping empty values', () => {
    const d = doc('xlsx', [tableBlock([['Name', 'City', 'Note'], ['Alice', 'Paris', ''], ['Bob', '', 'tall']])]);
    const r = table(d);
    expect(r.chunks.map((c) => c.content)).toEqual(['- Name: Alice\n- City: Paris', '- Name: Bob\n- Note: tall']);
    expect(r.chunks.map((c) => c.positions)).toEqual([[[1, 0, 0, 0, 0]], [[2, 1, 1, 1, 1]]]);
  });

  it('types columns by majority and writes values in the type\'s form', () => {
    // x ties int/float 1–1 and goes float (the type that loses less), so "2" reads "2.0" as in Python.
    const d = doc('csv', [
      tableBlock([
        ['n', 'x', 'ok', 'when', 'code'],
        ['1', '1.50', 'TRUE', '2024-01-05', '007'],
        ['2', '2', 'no', '2024-02-29 08:30', 'A1'],
      ]),
    ]);
    expect(table(d).chunks.map((c) => c.content)).toEqual([
      '- n: 1\n- x: 1.5\n- ok: yes\n- when: 2024-01-05 00:00:00\n- code: 007',
      '- n: 2\n- x: 2.0\n- ok: no\n- when: 2024-02-29 08:30:00\n- code: A1',
    ]);
  });

  it('drops id columns, de-duplicates names and skips CSV rows of the wrong width', () => {
    const d = doc('csv', [tableBlock([['id', 'a', 'a'], ['7', 'x', 'y'], ['8', 'short']])]);
    const r = table(d);
    expect(r.chunks.map((c) => c.content)).toEqual(['- a: x\n- a_2: y']);
    expect(r.notes).toEqual(['table: 1 row(s) with the wrong number of fields were skipped']);
  });

  it('leaves metadata-only columns out of the text (table_column_roles, manual mode)', () => {
    const d = doc('xlsx', [tableBlock([['title', 'sku'], ['Lamp', 'L-1']])]);
    const pc = { table_column_mode: 'manual', table_column_roles: { sku: 'metadata' } };
    expect(table(d, pc).chunks.map((c) => c.content)).toEqual(['- title: Lamp']);
    expect(table(d, { ...pc, table_column_mode: 'auto' }).chunks.map((c) => c.content)).toEqual(['- title: Lamp\n- sku: L-1']);
  });

  it('reads a TAB-separated text file with a header line', () => {
    expect(table(txt('名称\t数量\n苹果\t3')).chunks.map((c) => c.content)).toEqual(['- 名称: 苹果\n- 数量: 3']);
  });

  it('gives an empty document zero chunks', () => {
    expect(table(doc('xlsx', [])).chunks).toEqual([]);
    expect(table(doc('xlsx', [tableBlock([['only', 'header']])])).chunks).toEqual([]);
  });
});
