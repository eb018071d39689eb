/**
 * Chinese, Japanese and Korean runs of text (no spaces between words) as index terms.
 *
 * Every run keeps the overlapping character bigrams of analyzer version 2, so a question matches
 * whatever two characters it shares with a passage however either is segmented; words are added
 * on top (measured in bench/multilingual.ts, docs/retrieval.md "Languages"):
 * - Chinese: traditional characters folded to simplified (OpenCC's tables, opencc-js), then
 *   segmented by jieba (@node-rs/jieba: jieba-rs with its dictionary, prebuilt per platform);
 *   words of three characters or more are added (two-character words are bigrams already).
 * - Japanese and Korean: see `cjkOptions` below.
 * The dictionaries load on the first run of their language: a store without such text never
 * pays for them.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** How runs become terms; the defaults are what was measured best (bench/multilingual.ts can try others). */
export const cjkOptions: {
  zh: 'bigram' | 'bigram+long' | 'bigram+words' | 'words';
  ja: 'bigram' | 'bigram+long' | 'bigram+words' | 'words';
  ko: 'bigram' | 'bigram+stem';
  /** A Japanese segmenter to measure in place of the built-in one (bench only). */
  jaSegment?: (run: string) => string[];
} = { zh: 'bigram+long', ja: 'bigram', ko: 'bigram' };

interface JiebaLike { cut(text: string, hmm?: boolean): string[] }

let jieba: JiebaLike | undefined;
function jiebaCut(text: string): string[] {
  if (!jieba) {
    const { Jieba } = require('@node-rs/jieba') as { Jieba: { withDict(d: Uint8Array): JiebaLike } };
    const { dict } = require('@node-rs/jieba/dict') as { dict: Uint8Array };
    jieba = Jieba.withDict(dict);
  }
  return jieba.cut(text, true);
}

type Convert = (s: string) => string;
let toSimplified: Convert | undefined;
// Han character → its simplified form (itself when it has none).
const simplified = new Map<string, string>();

/** `run` with each traditional character replaced by its simplified form (OpenCC, Taiwan variants included). */
export function foldChinese(run: string): string {
  let out = '';
  let same = true;
  for (const ch of run) {
    let s = simplified.get(ch);
    if (s === undefined) {
      toSimplified ??= (require('opencc-js/t2cn') as { Converter(o: { from: string; to: string }): Convert }).Converter({ from: 'tw', to: 'cn' });
      s = toSimplified(ch);
      simplified.set(ch, s);
    }
    if (s !== ch) same = false;
    out += s;
  }
  return same ? run : out;
}

/** Overlapping bigrams of `chars`; a single character alone. */
export function pushBigrams(chars: readonly string[], out: string[]): void {
  if (chars.length === 1) out.push(chars[0]!);
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
}

function pushWords(words: readonly string[], mode: string, stop: ReadonlySet<string> | null, out: string[]): void {
  // Runs hold letters only (analyze.ts splits them off punctuation); lengths in UTF-16 units.
  const min = mode === 'bigram+long' ? 3 : 1;
  for (const w of words) if (w.length >= min && !stop?.has(w)) out.push(w);
}

/** The terms of one run of Han characters read as Chinese. */
export function chineseTerms(run: string, stop: ReadonlySet<string> | null, out: string[]): void {
  const text = foldChinese(run);
  const mode = cjkOptions.zh;
  if (mode !== 'words') pushBigrams([...text], out);
  if (mode !== 'bigram') pushWords(jiebaCut(text), mode, stop, out);
}

/** The terms of one run of Han characters and kana read as Japanese. */
export function japaneseTerms(run: string, stop: ReadonlySet<string> | null, out: string[]): void {
  const mode = cjkOptions.ja;
  if (mode !== 'words') pushBigrams([...run], out);
  if (mode !== 'bigram' && cjkOptions.jaSegment) pushWords(cjkOptions.jaSegment(run), mode, stop, out);
}

// Korean particles (josa) and common endings, longest first: "학교에서" is 학교 + 에서.
const JOSA = ['에서부터', '으로부터', '에게서', '한테서', '께서는', '에서는', '에게는', '으로는', '이라도', '까지는', '부터는', '에서', '에게', '한테', '께서',
  '으로', '까지', '부터', '처럼', '보다', '마다', '이나', '이며', '라도', '에는', '와는', '과는', '은', '는', '이', '가', '을', '를', '의', '에', '로', '와', '과', '도', '만', '며', '나'];

/** The terms of one Hangul word (Korean writes spaces between words, particles attached). */
export function koreanTerms(run: string, out: string[]): void {
  const chars = [...run];
  pushBigrams(chars, out);
  if (cjkOptions.ko === 'bigram+stem' && chars.length > 1) {
    for (const j of JOSA) {
      if (run.length > j.length + 1 && run.endsWith(j)) {
        out.push(run.slice(0, -j.length));
        return;
      }
    }
    out.push(run);
  }
}
