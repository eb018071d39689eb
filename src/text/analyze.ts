/**
 * Text analysis for the full-text index: the same function runs on chunks at index time and on
 * questions at query time, so both sides meet on the same terms.
 *
 * - Words of space-separated scripts are lower-cased and NFKC-normalised; Latin diacritics are
 *   dropped ("café" → "cafe").
 * - English words: wink-nlp's stop words (its English model's stop-word flag, as a list:
 *   stop-words.ts) are removed, then the Porter2 (Snowball English) stemmer of wink's English
 *   model reduces the rest ("investigations" → "investig"). Numbers stay as they are.
 * - Scripts written without spaces (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar) become
 *   overlapping character bigrams, so any two-character word of the question matches.
 * - Other scripts (Cyrillic, Greek, Arabic, Devanagari, …) keep the lower-cased word.
 *
 * Word results are memoised, so analysis costs one regex pass and one Map lookup per token.
 * Change ANALYZER_VERSION whenever the output for some input changes: the store re-indexes the
 * full-text rows of an older version when it opens the file.
 */
import { createRequire } from 'node:module';
import { WINK_STOP_WORDS } from './stop-words.js';
import { LANGS, type Lang, type Script } from './languages.js';
import { stemmerOf, stopWords } from './snowball.js';
import { chineseTerms, japaneseTerms, koreanTerms, pushBigrams } from './cjk.js';

/**
 * Bumped when analyze() changes; stored in the database next to the FTS index. 3: languages
 * (Snowball stemmers and stop words, Chinese words, per-chunk `lang`).
 */
export const ANALYZER_VERSION = 3;

const require = createRequire(import.meta.url);

type Stemmer = (w: string) => string;

let porter: Stemmer | null | undefined;

/**
 * The Porter2 stemmer module of wink's English model, alone: of the model only it and the
 * stop-word flags were used, and these are the list of stop-words.ts (reading the whole model
 * cost ~100 ms per process). null when it cannot be loaded (then lightStem).
 */
function porterStemmer(): Stemmer | null {
  if (porter === undefined) {
    try {
      porter = require('wink-eng-lite-web-model/dist/porter-stemmer.js') as Stemmer;
    } catch {
      porter = null;
    }
  }
  return porter;
}

/** Light English suffix stripping, used only when the Porter2 stemmer cannot be loaded. */
function lightStem(w: string): string {
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) return w.slice(0, -1);
  return w;
}

// word → term ('' = stop word). Bounded: cleared when it grows past MEMO_MAX entries.
const memo = new Map<string, string>();
const MEMO_MAX = 400_000;
// Longer "words" (hashes, base64, a pasted run of one letter) are kept as they are: the stemmer's
// regexes backtrack polynomially (3,000 letters: ~0.1 s; 100,000: minutes, blocking the process).
const STEM_MAX = 200;

/** The index term of one lower-cased, apostrophe-free English/ASCII word; '' for a stop word. */
export function stem(w: string): string {
  if (w.length > STEM_MAX) return w; // not memoised either: a long key would stay in memory
  const hit = memo.get(w);
  if (hit !== undefined) return hit;
  let out: string;
  if (/^[0-9]+$/.test(w)) out = w;
  else {
    // The list holds only words of letters a–z; its single letters (a, i) are dropped below anyway.
    out = WINK_STOP_WORDS.has(w) ? '' : (porterStemmer() ?? lightStem)(w);
    if (w.length === 1 && !/[0-9]/.test(w)) out = ''; // single letters carry no meaning
  }
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(w, out);
  return out;
}

// Scripts without spaces between words: indexed as character bigrams.
const NOSPACE = /[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u{20000}-\u{2fa1f}]/u;
const TOKEN = /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’]*/gu;
const ASCII_WORD = /^[a-z0-9]+$/;
// eslint-disable-next-line no-control-regex
const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ASCII_TOKEN = /[a-z0-9]+(?:'[a-z0-9]+)*/g;
const LATIN_MARKS = /[\u0300-\u036f]/g;

/**
 * What a text is analysed as: a language (languages.ts), or `'v2'`, analyzer version 2 (before
 * languages: English for Latin words, bigrams for every no-space script), which full-text rows
 * written by older versions still hold until the background re-index reaches them, and which
 * memory messages keep.
 */
export type Analysis = Lang | 'v2';

/**
 * Lower-cased, stop-word-free, stemmed terms in text order (`lang`: see Analysis; English by
 * default). Words of the language's script get its stop words and Snowball stemmer; Latin words
 * in a text of another script are read as English; words of other scripts stay as they are.
 * Chinese, Japanese and Korean become bigrams plus words (cjk.ts).
 */
export function analyze(text: string, lang: Analysis = 'en'): string[] {
  const out: string[] = [];
  if (!text) return out;
  if ((lang === 'en' || lang === 'v2') && ASCII_ONLY.test(text)) {
    // Fast path, same tokens as below: NFKC is the identity on ASCII.
    const low = text.toLowerCase();
    ASCII_TOKEN.lastIndex = 0;
    for (let m = ASCII_TOKEN.exec(low); m; m = ASCII_TOKEN.exec(low)) {
      let tok = m[0];
      if (tok.includes("'")) {
        tok = tok.replace(/'s$/, '').replace(/'/g, '');
        if (!tok) continue;
      }
      const s = stem(tok);
      if (s) out.push(s);
    }
    return out;
  }
  const nfkc = text.normalize('NFKC');
  // Turkish has a dotted and a dotless i: "I" lower-cases to "ı", "İ" to "i".
  const norm = lang === 'tr' ? nfkc.toLocaleLowerCase('tr') : nfkc.toLowerCase();
  const english = lang === 'v2' || lang === 'en';
  const memo = english ? undefined : memoOf(lang as Lang);
  for (const m of norm.matchAll(TOKEN)) {
    let tok = m[0];
    if (english && (tok.includes("'") || tok.includes('’'))) {
      tok = tok.replace(/['’]s$/, '').replace(/['’]/g, '');
      if (!tok) continue;
    }
    if (!NOSPACE.test(tok)) {
      if (english) pushEnglish(tok, out);
      else pushWord(tok, lang as Lang, memo!, out);
    } else if (lang === 'v2') pushMixedV2(tok, out);
    else pushMixed(tok, lang, out);
  }
  return out;
}

/**
 * Whether English analysis of `text` is sure to give analyzer version 2's terms: English changed
 * only the no-space scripts (Chinese words, runs split by script). Lets a re-index skip text
 * without them.
 */
export const englishIsV2 = (text: string): boolean => !NOSPACE.test(text);

/** A word as analyzer version 2 read every word: English stems for Latin, others as they are. */
function pushEnglish(word: string, out: string[]): void {
  const t = englishTerm(word);
  if (t) out.push(t);
}

/** The term of a word read as English ('' for none): version 2's reading of every word. */
function englishTerm(word: string): string {
  let tok = word;
  if (tok.includes("'") || tok.includes('’')) tok = tok.replace(/['’]s$/, '').replace(/['’]/g, '');
  if (!tok) return '';
  if (ASCII_WORD.test(tok)) return stem(tok);
  const plain = tok.normalize('NFKD').replace(LATIN_MARKS, '');
  return ASCII_WORD.test(plain) ? stem(plain) : tok;
}

const SCRIPT_OF: ReadonlyArray<[RegExp, Script]> = [
  [/\p{Script=Latin}/u, 'latin'], [/\p{Script=Cyrillic}/u, 'cyrillic'], [/\p{Script=Arabic}/u, 'arabic'], [/\p{Script=Greek}/u, 'greek'],
];
const scriptOf = (w: string): Script | undefined => SCRIPT_OF.find(([re]) => re.test(w))?.[1];
// Elided articles and pronouns before an apostrophe ("l'homme", "dell'uomo", "qu'il"): the word is what follows.
const ELISION = /^(?:[cdjlmnst]|qu|jusqu|lorsqu|puisqu|quoiqu|presqu|all|dall|dell|nell|sull|coll|quell|quest|un|d)['’]/;

// Per language: lower-cased word → term ('' = none). Bounded like stem()'s memo.
const memos = new Map<Lang, Map<string, string>>();

function memoOf(lang: Lang): Map<string, string> {
  let memo = memos.get(lang);
  if (!memo) memos.set(lang, (memo = new Map()));
  return memo;
}

/** A word of a text analysed as `lang` (not English); `memo`: `lang`'s. */
function pushWord(word: string, lang: Lang, memo: Map<string, string>, out: string[]): void {
  if (word.length > STEM_MAX) {
    out.push(word);
    return;
  }
  let t = memo.get(word);
  if (t === undefined) {
    t = wordTerm(word, lang);
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(word, t);
  }
  if (t) out.push(t);
}

/** The term of one lower-cased word of a text in `lang`; '' for a stop word or none. */
function wordTerm(word: string, lang: Lang): string {
  const def = LANGS[lang];
  const script = scriptOf(word);
  if (script === 'latin' && def.script !== 'latin') return englishTerm(word);
  // Another script than the language's (a Cyrillic name in a German text): as version 2 kept it.
  if (script !== def.script) return word.replace(/['’]/g, '');
  let w = word;
  if (w.includes("'") || w.includes('’')) {
    if (lang === 'fr' || lang === 'it') w = w.replace(ELISION, '');
    // Turkish marks a proper noun's suffixes with an apostrophe ("Türkiye'nin"): the noun is the word.
    else if (lang === 'tr') w = w.replace(/['’].*$/, '');
    w = w.replace(/['’]/g, '');
    if (!w) return '';
  }
  if (/^[0-9]+$/.test(w)) return w;
  if (def.script === 'latin' && [...w].length === 1) return ''; // single letters carry no meaning
  if (stopWords(lang)?.has(w)) return '';
  // The stemmer reads the word with its diacritics (German "ä" is not "a" to it); what it leaves
  // is folded, as FTS5's tokenizer would fold it anyway.
  const stemmer = stemmerOf(lang);
  const out = stemmer ? stemmer(w) : w;
  return def.script === 'latin' ? out.normalize('NFKD').replace(LATIN_MARKS, '') : out;
}

/** Splits a run holding no-space scripts ("gpt模型", "東京都に") by script and analyses each part. */
function pushMixed(run: string, lang: Lang, out: string[]): void {
  let buf = '';
  let cls: RunClass = 'word';
  const flush = () => {
    if (!buf) return;
    if (cls === 'han') {
      if (lang === 'ja' || KANA.test(buf)) japaneseTerms(buf, stopWords('ja'), out);
      else chineseTerms(buf, stopWords('zh'), out);
    } else if (cls === 'hangul') koreanTerms(buf, out);
    else if (cls === 'other') pushBigrams([...buf], out);
    else for (const w of analyze(buf, lang)) out.push(w);
    buf = '';
  };
  for (const ch of run) {
    const c = runClass(ch);
    if (c !== cls) flush();
    cls = c;
    buf += ch;
  }
  flush();
}

type RunClass = 'han' | 'hangul' | 'other' | 'word';

/** The run a character belongs to, by code point (this runs per character of every CJK text). */
function runClass(ch: string): RunClass {
  const c = ch.codePointAt(0)!;
  // Kana, Han (with Japanese's iteration mark 々 and prolonged sound mark ー, which belong to the run they are in)
  if ((c >= 0x3040 && c <= 0x30ff) || (c >= 0x31f0 && c <= 0x31ff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff)
    || (c >= 0xf900 && c <= 0xfaff) || (c >= 0x20000 && c <= 0x2fa1f) || c === 0x3005) return 'han';
  if ((c >= 0xac00 && c <= 0xd7af) || (c >= 0x1100 && c <= 0x11ff) || (c >= 0x3130 && c <= 0x318f)) return 'hangul';
  // Thai, Lao, Myanmar, Khmer
  if ((c >= 0x0e00 && c <= 0x0eff) || (c >= 0x1000 && c <= 0x109f) || (c >= 0x1780 && c <= 0x17ff)) return 'other';
  return 'word';
}
const KANA = /[\u3040-\u30ff\u31f0-\u31ff]/u;

function pushMixedV2(run: string, out: string[]): void {
  // Split mixed runs ("gpt模型") into no-space-script and other parts.
  let buf = '';
  let ns = false;
  const flush = () => {
    if (!buf) return;
    if (ns) pushBigrams([...buf], out);
    else for (const w of analyze(buf, 'v2')) out.push(w);
    buf = '';
  };
  for (const ch of run) {
    const c = NOSPACE.test(ch);
    if (c !== ns) flush();
    ns = c;
    buf += ch;
  }
  flush();
}

/** The analysed text as FTS5 stores it: terms joined by spaces. */
export function analyzeForIndex(text: string, lang: Analysis = 'en'): string {
  if (!text) return '';
  if ((lang !== 'en' && lang !== 'v2') || !ASCII_ONLY.test(text)) return analyze(text, lang).join(' ');
  // ASCII fast path of analyze(): the same tokens as ASCII_TOKEN, scanned by char code, and each
  // plain word's term found in an open-addressing table probed in place (no substring per token).
  const low = text.toLowerCase();
  const n = low.length;
  const out: string[] = [];
  let i = 0;
  while (i < n) {
    let c = low.charCodeAt(i);
    if (!isAlnum(c)) {
      i++;
      continue;
    }
    const start = i;
    let h = 0;
    let apos = false;
    for (;;) {
      h = (Math.imul(h, 31) + c) | 0;
      i++;
      if (i >= n) break;
      c = low.charCodeAt(i);
      if (isAlnum(c)) continue;
      if (c === 39 && i + 1 < n && isAlnum(low.charCodeAt(i + 1))) {
        apos = true;
        continue;
      }
      break;
    }
    let term: string;
    if (apos) {
      const tok = low.slice(start, i).replace(/'s$/, '').replace(/'/g, '');
      if (!tok) continue;
      term = stem(tok);
    } else term = termAt(low, start, i, h);
    if (term) out.push(term);
  }
  return out.join(' ');
}

const isAlnum = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 48 && c <= 57);

// Open-addressing table word → term over stem()'s memo, keyed by the word's position in the text.
const TABLE_BITS = 17;
let tableKeys: Array<string | undefined> = new Array(1 << TABLE_BITS);
let tableVals: string[] = new Array(1 << TABLE_BITS);
let tableUsed = 0;

function termAt(low: string, start: number, end: number, h: number): string {
  const mask = (1 << TABLE_BITS) - 1;
  const len = end - start;
  let slot = (h ^ (h >>> 15)) & mask;
  for (;;) {
    const k = tableKeys[slot];
    if (k === undefined) break;
    if (k.length === len && low.startsWith(k, start)) return tableVals[slot]!;
    slot = (slot + 1) & mask;
  }
  const word = low.slice(start, end);
  const term = stem(word);
  if (tableUsed >= (1 << TABLE_BITS) >>> 1) {
    // Full enough: start over (like stem()'s memo), then find the new word's slot again.
    tableKeys = new Array(1 << TABLE_BITS);
    tableVals = new Array(1 << TABLE_BITS);
    tableUsed = 0;
    slot = (h ^ (h >>> 15)) & mask;
  }
  tableKeys[slot] = word;
  tableVals[slot] = term;
  tableUsed++;
  return term;
}
