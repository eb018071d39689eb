/**
 * The related words of a question's terms, for the text side's bridge (RetrievalOptions.bridgeWeight,
 * off by default): the tables are the built-in answer model's (llm/related-terms.ts), read here and
 * handed to the search as plain data, which a search thread receives with the request.
 */
import { wordnetRelatedTerms, type RelatedTerms } from '../llm/index.js';
import type { QuestionRelated, RetrievalOptions } from '../search/index.js';
import { analyze } from '../text/index.js';

/** The tables with GloVe's neighbours (true) and without (false), read once each; undefined when not installed. */
const tables = new Map<boolean, RelatedTerms | undefined>();

/**
 * Each term of the question read as English → its related stems, strongest first (ties by stem),
 * or undefined when bridging is off or the tables are not installed. The search uses it only
 * when it reads the question as English, and only for terms no chunk holds.
 */
export function questionRelated(question: string, o: Readonly<RetrievalOptions>): QuestionRelated | undefined {
  if (o.bridgeWeight <= 0 || o.bridgeTerms <= 0) return undefined;
  if (!tables.has(o.bridgeGlove)) tables.set(o.bridgeGlove, wordnetRelatedTerms(o.bridgeGlove ? {} : { g: 0 }));
  const related = tables.get(o.bridgeGlove);
  if (!related) return undefined;
  const out: Record<string, Array<[string, number]>> = {};
  for (const t of new Set(analyze(question, 'en'))) {
    const rs = [...related(t)].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    if (rs.length) out[t] = rs;
  }
  return out;
}
