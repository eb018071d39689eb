/**
 * Language detection for chunks of datasets without a language, and for questions over datasets
 * of different languages.
 *
 * Chinese, Japanese and Korean are told by their scripts (kana → Japanese, Hangul → Korean,
 * other Han → Chinese). The rest goes to franc (wooorm's trigram detector: ~25 ms and ~10 MB to
 * load, ~80 µs a call), restricted to the languages ragloom has an analyzer for. On the Universal
 * Declaration of Human Rights in 26 texts (`npx tsx bench/multilingual.ts --detect`): the right
 * language for 87% of 2-word, 90% of 3-word, 97% of 6-word and 99.6% of whole articles; its
 * mistakes are between neighbours whose analyzers are alike (Danish/Norwegian, Czech/Slovak,
 * Spanish/Portuguese). Measured against it (installed by hand): eld (Nito-ELD) as accurate but
 * 85–200 MB and 0.1–0.7 s to load; tinyld less accurate on short text.
 */
import { createRequire } from 'node:module';
import { LANGS, type Lang } from './languages.js';

const require = createRequire(import.meta.url);

type Franc = (text: string, opts: { only: string[]; minLength: number }) => string;

let franc: Franc | undefined;
const byFranc = new Map<string, Lang>();
const ONLY: string[] = [];
for (const [k, d] of Object.entries(LANGS)) {
  if (!d.franc) continue;
  byFranc.set(d.franc, k as Lang);
  ONLY.push(d.franc);
}

/** franc, loaded on the first detection (franc is an ES module: Node ≥ 20.19 requires it synchronously). */
function francFn(): Franc {
  franc ??= (require('franc') as { franc: Franc }).franc;
  return franc;
}

/** Characters read for detection: a passage's first 2,000 say as much as the whole. */
const SAMPLE = 2000;
const HANGUL = /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]/gu;
const KANA = /[\u3040-\u30ff\u31f0-\u31ff]/gu;
const HAN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u{20000}-\u{2fa1f}]/gu;
const LETTER = /\p{L}/gu;

const count = (s: string, re: RegExp): number => s.match(re)?.length ?? 0;

/**
 * The language of `text` among those ragloom analyses, or `fallback` when it cannot be told
 * (no letters, or too little text for franc).
 *
 * @example detectLanguage('Alle Menschen sind frei und gleich an Würde und Rechten geboren.') // 'de'
 */
export function detectLanguage(text: string, fallback: Lang = 'en'): Lang {
  const s = text.length > SAMPLE ? text.slice(0, SAMPLE) : text;
  const letters = count(s, LETTER);
  if (letters === 0) return fallback;
  const hangul = count(s, HANGUL);
  const kana = count(s, KANA);
  const han = count(s, HAN);
  // East Asian text is told by its script when it is at least a fifth of the letters (a Chinese
  // passage with English names in it is Chinese); kana mark Japanese even among many Han.
  if ((hangul + kana + han) * 5 >= letters) {
    if (hangul >= kana + han) return 'ko';
    return kana * 10 >= kana + han ? 'ja' : 'zh';
  }
  const code = francFn()(s, { only: ONLY, minLength: 1 });
  return byFranc.get(code) ?? fallback;
}
