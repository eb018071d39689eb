import { describe, expect } from 'vitest';
import { join } from 'node:path';
import { test, apiError, enc } from '../helpers.js';
import { Client } from '../../src/index.js';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { Document as DocxDocument, Packer, Paragraph } from 'docx';

describe('DataSet#uploadDocuments()', () => {
  test('stores files, names duplicates a(1).txt, picks the method by type', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb', chunk_method: 'book' });
    const docs = await ds.uploadDocuments([
      { display_name: 'a.txt', blob: enc('one') },
      { display_name: 'a.txt', blob: enc('two') },
      { display_name: 'deck.pptx', blob: enc('pk') },
      { display_name: 'mail.eml', blob: enc('Subject: x\n\nhi') },
      { display_name: 'photo.PNG', blob: enc('png') },
      { display_name: 'empty.md', blob: new Uint8Array() },
    ]);
    expect(docs.map((d) => d.name)).toEqual(['a.txt', 'a(1).txt', 'deck.pptx', 'mail.eml', 'photo.PNG', 'empty.md']);
    expect(docs.map((d) => d.chunk_method)).toEqual(['book', 'book', 'presentation', 'email', 'picture', 'book']);
    expect(docs.map((d) => d.type)).toEqual(['doc', 'doc', 'doc', 'doc', 'visual', 'doc']);
    expect(docs[0]).toMatchObject({ run: 'UNSTART', size: 3, chunk_count: 0, token_count: 0, progress: 0, dataset_id: ds.id, location: 'a.txt' });
    expect(docs[0]!.parser_config).toEqual(ds.parser_config);
    expect((await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('3') }]))[0]!.name).toBe('a(2).txt');
    expect((await client.listDatasets())[0]!.document_count).toBe(7);
  });

  test('thousands of files of one name in one call: the same names as one at a time, counted once', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    await ds.uploadDocuments([{ display_name: 'note.txt', blob: enc('first') }, { display_name: 'note(3).txt', blob: enc('taken') }]);
    const many = Array.from({ length: 3000 }, (_, i) => ({ display_name: i % 2 ? 'note.txt' : 'NOTE.txt', blob: enc(`note ${i}`) }));
    const docs = await ds.uploadDocuments(many);
    // One at a time: NOTE.txt → NOTE(1).txt, note.txt → note(2).txt, NOTE.txt → NOTE(4).txt (note(3) taken), …
    const expected: string[] = [];
    const taken = new Set(['note.txt', 'note(3).txt']);
    for (const f of many) {
      let name = f.display_name;
      for (let k = 1; taken.has(name.toLowerCase()); k++) name = f.display_name.replace('.txt', `(${k}).txt`);
      taken.add(name.toLowerCase());
      expected.push(name);
    }
    expect(docs.map((d) => d.name)).toEqual(expected);
    expect((await client.listDatasets())[0]!.document_count).toBe(3002);
  });

  test('rejects unsupported types with 500, naming each file, writing nothing', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const e = await apiError(ds.uploadDocuments([
      { display_name: 'ok.txt', blob: enc('x') },
      { display_name: 'ragflow_test.exe', blob: enc('MZ') },
      { display_name: 'b.xyz', blob: enc('?') },
    ]));
    expect(e.code).toBe(500);
    expect(e.message).toBe('ragflow_test.exe: This type of file has not been supported yet!\nb.xyz: This type of file has not been supported yet!');
    expect(await ds.listDocuments()).toHaveLength(0);
  });

  test('a name without an extension is typed by its content: README, LICENSE, COPYING, NEWS, GPL-3, a PDF, a DOCX; a program is refused', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb', chunk_method: 'book' });
    const pdf = await PDFDocument.create();
    pdf.addPage().drawText('The quarterly report shows revenue grew by nine percent.', { x: 50, y: 700, size: 12, font: await pdf.embedFont(StandardFonts.Helvetica) });
    const docx = new Uint8Array(await Packer.toBuffer(new DocxDocument({ sections: [{ children: [new Paragraph('Dear tenant, the heating will be serviced on Monday.')] }] })));
    const text = {
      README: '# ragloom\n\nAn embeddable retrieval engine. Run `npx ragloom quickstart` to try it.\n',
      LICENSE: 'Apache License\nVersion 2.0, January 2004\n\nTERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION\n',
      COPYING: 'Permission is granted to copy, distribute and/or modify this document.\n',
      NEWS: '0.1.0: first release; the lighthouse keeper log parser was added.\n',
      'GPL-3': 'GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007\n',
    };
    const docs = await ds.uploadDocuments([
      ...Object.entries(text).map(([display_name, t]) => ({ display_name, blob: enc(t) })),
      { display_name: 'report', blob: await pdf.save() },
      { display_name: 'letter', blob: docx },
    ]);
    expect(docs.map((d) => [d.name, d.type, (d as unknown as { suffix: string }).suffix, d.chunk_method])).toEqual([
      ...Object.keys(text).map((n) => [n, 'doc', '', 'book']), ['report', 'pdf', '', 'book'], ['letter', 'doc', '', 'book'],
    ]);
    const parsed = await ds.parseDocuments(docs.map((d) => d.id));
    expect(parsed.map((p) => p[1])).toEqual(docs.map(() => 'DONE'));
    const hits = await client.retrieve({ question: 'how much did revenue grow this quarter', dataset_ids: [ds.id], similarity_threshold: 0 });
    expect(hits[0]!.document_keyword).toBe('report');
    expect((await client.retrieve({ question: 'when is the heating serviced', dataset_ids: [ds.id] }))[0]!.document_keyword).toBe('letter');
    // A program (an ELF header: binary), and an unknown extension (as RAGFlow refuses it): refused, nothing written.
    const e = await apiError(ds.uploadDocuments([
      { display_name: 'NOTES', blob: enc('kept only if the call succeeds') },
      { display_name: 'program', blob: Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0x3e, 0]) },
      { display_name: 'notes.xyz', blob: enc('plain text under an unknown extension') },
    ]));
    expect([e.code, e.message]).toEqual([500, 'program: This type of file has not been supported yet!\nnotes.xyz: This type of file has not been supported yet!']);
    expect(await ds.listDocuments({ page_size: 0 })).toHaveLength(7);
  }, 60_000);

  test('no files → 101 No file part!; empty name → No file selected!; long name → 255 bytes', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    let e = await apiError(ds.uploadDocuments([]));
    expect([e.code, e.message]).toEqual([101, 'No file part!']);
    e = await apiError(ds.uploadDocuments([{ display_name: '', blob: enc('x') }]));
    expect([e.code, e.message]).toEqual([101, 'No file selected!']);
    e = await apiError(ds.uploadDocuments([{ display_name: `${'é'.repeat(126)}.txt`, blob: enc('x') }]));
    expect([e.code, e.message]).toEqual([101, 'File name must be 255 bytes or less.']);
    expect(await ds.listDocuments()).toHaveLength(0);
  });

  test('an unknown dataset → Can\'t find the dataset', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    await client.deleteDatasets({ ids: [ds.id] });
    const e = await apiError(ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('x') }]));
    expect([e.code, e.message]).toEqual([102, `Can't find the dataset with ID ${ds.id}!`]);
  });
});

describe('Document#download()', () => {
  test('returns the bytes unchanged, also after close and reopen; identical files share one blob', async ({ dir }) => {
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7919) % 256);
    const path = join(dir, 'kb.db');
    let client = new Client({ path });
    const ds = await client.createDataset({ name: 'kb' });
    const [a, b] = await ds.uploadDocuments([{ display_name: 'x.pdf', blob: bytes }, { display_name: 'y.pdf', blob: bytes }]);
    expect(await a!.download()).toEqual(bytes);
    await client.close();
    client = new Client({ path });
    const [again] = await (await client.listDatasets())[0]!.listDocuments({ id: b!.id });
    expect(Buffer.compare(Buffer.from(await again!.download()), Buffer.from(bytes))).toBe(0);
    await client.close();
  });

  test('a 0-byte file rejects with 102 This file is empty.', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const [d] = await ds.uploadDocuments([{ display_name: 'empty.txt', blob: new Uint8Array() }]);
    const e = await apiError(d!.download());
    expect([e.code, e.message]).toEqual([102, 'This file is empty.']);
  });
});

describe('DataSet#listDocuments()', () => {
  test('paging, ordering, keywords, name, id, suffix and run filters', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const names = ['Alpha.txt', 'beta.md', 'gamma.txt', 'ALPHABET.md'];
    const docs = [];
    for (const n of names) docs.push(...(await ds.uploadDocuments([{ display_name: n, blob: enc(n) }])));
    expect((await ds.listDocuments()).map((d) => d.name)).toEqual([...names].reverse());
    expect((await ds.listDocuments({ desc: false, page: 2, page_size: 3 })).map((d) => d.name)).toEqual(['ALPHABET.md']);
    expect((await ds.listDocuments({ page_size: 0 })).length).toBe(4);
    expect((await ds.listDocuments({ keywords: 'alpha' })).map((d) => d.name).sort()).toEqual(['ALPHABET.md', 'Alpha.txt']);
    expect((await ds.listDocuments({ name: 'beta.md' })).map((d) => d.id)).toEqual([docs[1]!.id]);
    // An id does not lift the other filters (RAGFlow's get_by_kb_id applies them all), and a name is
    // checked, then filtered by: an id with another document's name lists nothing.
    expect((await ds.listDocuments({ id: docs[2]!.id, keywords: 'zzz' })).map((d) => d.name)).toEqual([]);
    expect((await ds.listDocuments({ id: docs[2]!.id, keywords: 'GAM' })).map((d) => d.name)).toEqual(['gamma.txt']);
    expect((await ds.listDocuments({ id: docs[2]!.id, name: 'beta.md' })).map((d) => d.name)).toEqual([]);
    expect((await ds.listDocuments({ id: docs[2]!.id, name: 'Gamma.TXT' })).map((d) => d.name)).toEqual(['gamma.txt']);
    const ghost = await apiError(ds.listDocuments({ id: docs[2]!.id, name: 'ghost.txt' }));
    expect([ghost.code, ghost.message]).toEqual([102, "You don't own the document ghost.txt."]);
    expect((await ds.listDocuments({ suffix: ['md'] })).length).toBe(2);
    expect((await ds.listDocuments({ run: ['UNSTART'] })).length).toBe(4);
    expect((await ds.listDocuments({ run: ['DONE', '4'] })).length).toBe(0);
  });

  test.for([
    [{ name: 'ghost.txt' }, "You don't own the document ghost.txt."],
    [{ id: 'ghost' }, "You don't own the document ghost."],
    [{ run: ['SOMETIMES'] }, 'Invalid filter run status conditions: SOMETIMES'],
    [{ id: 'a', ids: ['b'] }, "Cannot use both 'id' and 'ids' parameters at the same time."],
  ])('rejects %j', async (row, { client }) => {
    const [q, msg] = row as unknown as [Record<string, unknown>, string];
    const ds = await client.createDataset({ name: 'kb' });
    const e = await apiError(ds.listDocuments(q));
    expect(e.message).toBe(msg);
  });
});

describe('Document#update()', () => {
  test('renames (display_name too), keeps the extension, sets meta_fields and enabled', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const [d] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('x') }]);
    await d!.update({ name: 'b.txt' });
    expect(d!.name).toBe('b.txt');
    await d!.update({ display_name: 'c.TXT' });
    expect(d!.name).toBe('c.TXT');
    await d!.update({ meta_fields: { author: 'x', year: 2020, tags: ['a', 'b'] } });
    expect(d!.meta_fields).toEqual({ author: 'x', year: 2020, tags: ['a', 'b'] });
    await d!.update({ enabled: 0 });
    expect((d as unknown as { status: string }).status).toBe('0');
    await d!.update({ chunk_count: 0, token_count: 0, progress: 0 }); // unchanged read-only values pass
  });

  test('case-sensitive duplicate check: X.TXT beside x.txt is allowed, x.txt is not', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const [, b] = await ds.uploadDocuments([{ display_name: 'x.txt', blob: enc('1') }, { display_name: 'y.txt', blob: enc('2') }]);
    const e = await apiError(b!.update({ name: 'x.txt' }));
    expect([e.code, e.message]).toEqual([102, 'Duplicated document name in the same dataset.']);
    await b!.update({ name: 'X.TXT' });
    expect(b!.name).toBe('X.TXT');
  });

  test('changing chunk_method resets the document and drops its chunks', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const [d] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('x') }]);
    await d!.addChunk({ content: 'first chunk' });
    expect((await ds.listDocuments())[0]!.chunk_count).toBe(1);
    await d!.update({ chunk_method: 'qa' });
    expect(d).toMatchObject({ chunk_method: 'qa', run: 'UNSTART', chunk_count: 0, progress: 0 });
    expect(await d!.listChunks()).toHaveLength(0);
    expect((await client.listDatasets())[0]!.chunk_count).toBe(0);
  });

  test.for([
    [{ name: 'a.pdf' }, "The extension of file can't be changed", 101],
    [{ name: `${'x'.repeat(252)}.txt` }, 'File name must be 255 bytes or less.', 101],
    [{ chunk_count: 5 }, "Can't change `chunk_count`.", 102],
    [{ token_count: 5 }, "Can't change `token_count`.", 102],
    [{ progress: 0.5 }, "Can't change `progress`.", 102],
    [{ progress: 1.5 }, 'Field: <progress> - Message: <Input should be less than or equal to 1> - Value: <1.5>', 102],
    [{ chunk_method: 'other_chunk_method' }, "Field: <chunk_method> - Message: <`chunk_method` other_chunk_method doesn't exist> - Value: <other_chunk_method>", 102],
    [{ chunk_method: '' }, '`chunk_method` (empty string) is not valid', 102],
    [{ chunk_method: 'resume' }, "`chunk_method` resume doesn't exist", 102],
    [{ meta_fields: 'x' }, 'Field: <meta_fields> - Message: <Input should be a valid dictionary> - Value: <x>', 102],
    [{ meta_fields: { a: { b: 1 } } }, "Field: <meta_fields> - Message: <The type is not supported: {'b': 1}> - Value: <{'a': {'b': 1}}>", 102],
    [{ meta_fields: { a: ['x', null] } }, "Field: <meta_fields> - Message: <The type is not supported in list: ['x', None]> - Value: <{'a': ['x', None]}>", 102],
    [{ parser_config: { bogus: 1 } }, 'Extra inputs are not permitted', 102],
  ])('rejects %j and changes nothing', async (row, { client }) => {
    const [msg0, msg, code] = row as unknown as [Record<string, unknown>, string, number];
    const ds = await client.createDataset({ name: 'kb' });
    const [d] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('x') }]);
    const before = d!.toJSON();
    const e = await apiError(d!.update(msg0));
    expect(e.code).toBe(code);
    expect(e.message).toContain(msg);
    expect((await ds.listDocuments({ id: d!.id }))[0]!.toJSON()).toEqual(before);
  });

  test('images and slides cannot switch method; foreign documents are refused', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const [img, deck] = await ds.uploadDocuments([{ display_name: 'a.png', blob: enc('x') }, { display_name: 'b.pptx', blob: enc('y') }]);
    expect((await apiError(img!.update({ chunk_method: 'naive' }))).message).toBe('Not supported yet!');
    expect((await apiError(deck!.update({ chunk_method: 'naive' }))).message).toBe('Not supported yet!');
    const other = await client.createDataset({ name: 'other' });
    const [o] = await other.uploadDocuments([{ display_name: 'o.txt', blob: enc('o') }]);
    Object.assign(o!, { dataset_id: ds.id });
    expect((await apiError(o!.update({ name: 'p.txt' }))).message).toBe("The dataset doesn't own the document.");
  });
});

describe('DataSet#deleteDocuments()', () => {
  test('deletes by id or all; counts follow', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const docs = await ds.uploadDocuments(['a', 'b', 'c'].map((n) => ({ display_name: `${n}.txt`, blob: enc(n) })));
    await ds.deleteDocuments({ ids: [docs[0]!.id] });
    expect((await ds.listDocuments()).map((d) => d.name).sort()).toEqual(['b.txt', 'c.txt']);
    await ds.deleteDocuments({ delete_all: true });
    expect(await ds.listDocuments()).toHaveLength(0);
    expect((await client.listDatasets())[0]!.document_count).toBe(0);
  });

  test('bad requests: nothing given, both given, duplicates, unknown ids (nothing deleted)', async ({ client }) => {
    const ds = await client.createDataset({ name: 'kb' });
    const [a] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('a') }]);
    let e = await apiError(ds.deleteDocuments({}));
    expect([e.code, e.message]).toEqual([102, `should either provide doc ids or set delete_all(true), dataset: ${ds.id}. `]);
    e = await apiError(ds.deleteDocuments({ ids: [a!.id], delete_all: true }));
    expect(e.message).toBe(`should not provide both doc ids and delete_all(true), dataset: ${ds.id}. `);
    e = await apiError(ds.deleteDocuments({ ids: [a!.id, a!.id] }));
    expect([e.code, e.message]).toEqual([101, `Field: <ids> - Message: <Duplicate ids: '${a!.id}'> - Value: <['${a!.id}', '${a!.id}']>`]);
    e = await apiError(ds.deleteDocuments({ ids: [a!.id, 'ghost'] }));
    expect(e.message).toBe(`These documents do not belong to dataset ${ds.id} or Document not found: ghost`);
    expect(await ds.listDocuments()).toHaveLength(1);
  });
});
