import { describe, expect, it } from 'vitest';
import { chunkDocument } from '../../../src/ingest/chunkers/index.js';
import { ctx, doc, tableBlock, txt } from './helpers.js';

const tag = (d: Parameters<typeof chunkDocument>[1]) => chunkDocument('tag', d, ctx());

describe('tag', () => {
  it('splits the tag column on commas and writes "." as "_"', () => {
    const r = tag(doc('xlsx', [tableBlock([['Refund policy', 'billing, v2.1 ,support'], ['no tags']])]));
    expect(r.chunks).toHaveLength(1);
    expect(r.chunks[0]).toMatchObject({ content: 'Refund policy', tag_kwd: ['billing', 'v2_1', 'support'] });
  });

  it('reads TAB lines, gathering untagged lines into the next tagged one', () => {
    const r = tag(txt('first line\nsecond\tx,y\nthird\tz'));
    expect(r.chunks.map((c) => [c.content, c.tag_kwd])).toEqual([
      ['\nfirst line\nsecond', ['x', 'y']],
      ['\nthird', ['z']],
    ]);
  });

  it('reads CSV rows', () => {
    const r = tag(doc('csv', [tableBlock([['a', 't1'], ['b', 't2,t3']])]));
    expect(r.chunks.map((c) => [c.content, c.tag_kwd])).toEqual([
      ['\na', ['t1']],
      ['\nb', ['t2', 't3']],
    ]);
  });

  it('gives an empty document zero chunks', () => {
    expect(tag(doc('csv', [])).chunks).toEqual([]);
  });
});
