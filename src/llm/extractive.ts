/**
 * `ragloom-extractive@Builtin`: the chat model used when none is configured. It runs offline and
 * never writes text of its own: it answers with the sentences of the retrieved passages that best
 * answer the question, in a readable order, each passage's sentences followed by its `[ID:n]`.
 *
 * Scoring, per sentence of the passages the prompt numbered (split by the injected `splitSentences`):
 * - BM25 of the question's terms (the retrieval analyzer's stems, no stop words), with idf taken
 *   over the sentences of the given knowledge, divided by the question's own upper bound
 *   Σ idf·(k1+1) so that it lies in [0,1] whatever the passages. The question's focus ("how many
 *   *fatalities*", "what is the *capital*") weighs more; words that only name the kind of answer
 *   ("what *year*", "the *number* of") are not matched but favour sentences with dates or numbers.
 * - Context: the terms of the title a sentence stands under, of its document's title, and, for a
 *   sentence that refers back ("It is …"), of the sentence before count at a reduced weight.
 * - Titles are not quoted (they lend their terms), tables of contents and running headers are
 *   dropped, echoes of the question and code / grammar lines count less, long table records are
 *   shown by their first field and the fields that hold a question term.
 * - Mixed with the cosine similarity of sentence and question when an embedder is given
 *   (`vectorWeight`), plus a small bonus for the passage's rank.
 * The question is answered only if some sentence holds enough of its idf-weighted terms
 * (`minCoverage`); then the best sentences (up to `maxSentences`, at least `relativeScore` of the
 * best, no near-duplicates) are grouped by passage, kept in document order inside a passage, and
 * the passages ordered by their best sentence. A sentence that refers back brings the one before.
 *
 * With nothing relevant it answers `empty_response` (or a fixed sentence saying so); with no
 * knowledge at all it says that it answers only from a knowledge base. Same input, same bytes.
 */
import type { ChatDelta, ChatMessage, ChatModel, ChatOptions, ChatResult, KnowledgeItem, PassageSentence as Sentence, Usage } from './types.js';
import { ChatModelError } from './errors.js';

export const EXTRACTIVE_MODEL_ID = 'ragloom-extractive@Builtin';

/** The answer when the chat has no knowledge base at all (and no empty_response is set). */
export const NO_KNOWLEDGE_ANSWER =
  "I am ragloom's built-in extractive model: I answer only with sentences quoted from a knowledge base, and this conversation has none. Link a dataset to the chat assistant, or configure a generative chat model.";

/** The answer when no passage is relevant to the question (and no empty_response is set). */
export const NOT_FOUND_ANSWER = 'No passage of the knowledge base answers this question.';

export interface ExtractiveChatModelOptions {
  /** The retrieval analyzer: lower-cased stems without stop words (src/text `analyze`). */
  analyze: (text: string) => string[];
  /** A passage's sentences, titles, list items and table rows, in order (src/text `splitSentences`). */
  splitSentences: (text: string, opts?: { maxChars?: number }) => Sentence[];
  /** Unit vectors for texts (the datasets' embedding model); adds meaning to term overlap. */
  embed?: (texts: string[]) => Promise<Float32Array[]>;
  /** Token counter for `usage` and `max_tokens`; else characters / 4. */
  countTokens?: (text: string) => number;
  /** Share of cosine similarity in a sentence's score, when `embed` is given. @default 0.3 */
  vectorWeight?: number;
  /** Most sentences quoted (sentences brought in as context for another do not count). @default 5 */
  maxSentences?: number;
  /** Lowest score a sentence may have, in [0,1]. @default 0.08 */
  minScore?: number;
  /** Sentences must score at least this share of the best one. @default 0.6 */
  relativeScore?: number;
  /**
   * The question is answered only if some sentence (with its title and, for one that refers back,
   * the sentence before) holds this share of the question's idf-weighted terms. @default 0.3
   */
  minCoverage?: number;
  /** Cosine similarity that makes a sentence relevant without any question term. @default 0.85 */
  minCosine?: number;
  /** Longest sentence quoted whole; longer ones are cut. @default 480 */
  maxSentenceChars?: number;
  /** Rough length budget of an answer in characters (the first sentence always fits). @default 1600 */
  maxAnswerChars?: number;
  /** Most sentences embedded per answer (the best by term score). @default 64 */
  maxEmbed?: number;
  /** @default 'ragloom-extractive@Builtin' */
  id?: string;
  /** Context window reported to the caller (it fits knowledge and history to it). @default 32768 */
  maxTokens?: number;
}

interface Candidate {
  passage: number;
  /** Order in the passage. */
  index: number;
  sentence: Sentence;
  /** The text quoted (a long record: its first and relevant fields). */
  text: string;
  terms: string[];
  /** Terms of the title above it and, for a sentence that refers back, of the one before: term → weight. */
  context: Map<string, number>;
  term: number;
  /** Share of the question's idf mass the sentence (and its context) holds. */
  coverage: number;
  /** Cosine similarity to the question (0 when not embedded). */
  cosine: number;
  score: number;
}

const K1 = 1.2;
const B = 0.5;
const RANK_BONUS = 0.04;
const NUMBER_Q = /\bhow (many|much|long|old|often|far|big|large|tall|high|fast|heavy|wide|deep)\b/i;
const DATE_Q = /\bwhen\b|\bsince when\b/i;
/** "what year", "by which date": the noun names the answer's kind. */
const TYPED_Q = /\b(what|which)\s+(dates?|years?|days?|months?|times?|numbers?|amounts?|percentages?|price|age)\b/i;
/** "the number of …", "the total amount of …": a count is asked for. */
const COUNT_Q = /\b(the|total|overall|combined)\s+(number|amount|count)\s+of\b/i;
const FOCUS_Q = /\b(?:what|which|whose|how (?:many|much))\b(?:\s+(?:is|are|was|were|does|do|did|the|a|an|of))*/i;
const FOCUS_WEIGHT = 1.5;
const TITLE_CONTEXT = 0.35;
const DOC_TITLE_CONTEXT = 0.25;
const ANAPHOR_CONTEXT = 0.5;
const DATE = /\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+\d{1,2}\b|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b(?:1[5-9]|20)\d{2}\b|\b\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}\b/i;
const PRONOUN = /\b(?:it|its|they|them|their|this|that|these|those|he|she|his|her|him|there|one|ones)\b/i;
/** A sentence that leans on the one before: it opens with a link word or has a pronoun early on. */
const ANAPHOR = /^(?:(?:such|the latter|the former|however|therefore|thus|also|in addition|furthermore|moreover|as a result|for example|for instance|but|and|so|then)\b|(?:\S+\s+){0,4}(?:it|its|this|these|those|they|their|them|he|she|his|her|him)\b)/i;
const URL = /\bhttps?:\/\/\S+|\bwww\.\S+|<[a-z]+:[^>\s]+>/gi;

function abortError(id: string, signal: AbortSignal): ChatModelError {
  return new ChatModelError({ kind: 'aborted', model: id, message: 'the answer was aborted', cause: signal.reason });
}

/** The knowledge block of a RAGFlow prompt: `ID: n`, `├── Key: value` lines, `└── Content:` and the text. */
export function parseKnowledge(text: string): KnowledgeItem[] | undefined {
  const head = /(?:^|\n)ID:\s*(\d+)\n((?:├──[^\n]*\n)*)└── Content:\n/g;
  const found: Array<{ id: number; title: string; start: number; end: number }> = [];
  for (let m = head.exec(text); m; m = head.exec(text)) {
    const title = /├── Title:\s?([^\n]*)/.exec(m[2] ?? '')?.[1]?.trim() ?? '';
    if (found.length) found[found.length - 1]!.end = m.index;
    found.push({ id: Number(m[1]), title, start: m.index + m[0].length, end: text.length });
  }
  if (!found.length) return undefined;
  return found.map((f, i) => {
    let content = text.slice(f.start, f.end);
    // Passages are joined by "\n\n------\n\n"; text after the block ends the last one.
    content = content.replace(/\n+-{3,}\s*$/, '');
    if (i === found.length - 1) {
      const tail = /\n\s*(?:The above is the knowledge base\.?|#{1,6} ?Citations\b|#{1,6} ?Query:|-{6,}\s*\n)/i.exec(content);
      if (tail) content = content.slice(0, tail.index);
    }
    return { id: f.id, title: f.title, content: content.trim() };
  });
}

export class ExtractiveChatModel implements ChatModel {
  readonly id: string;
  readonly maxTokens: number;
  /** It cannot rewrite questions, extract keywords or call tools: callers skip those steps. */
  readonly capabilities = { rewrite: false, keywords: false, tools: false } as const;
  private readonly o: Required<Omit<ExtractiveChatModelOptions, 'embed' | 'countTokens' | 'id' | 'maxTokens'>> &
    Pick<ExtractiveChatModelOptions, 'embed' | 'countTokens'>;

  constructor(opts: ExtractiveChatModelOptions) {
    if (typeof opts?.analyze !== 'function') throw new TypeError('ExtractiveChatModel needs an `analyze` function');
    if (typeof opts.splitSentences !== 'function') throw new TypeError('ExtractiveChatModel needs a `splitSentences` function');
    this.id = opts.id ?? EXTRACTIVE_MODEL_ID;
    this.maxTokens = opts.maxTokens ?? 32768;
    this.o = {
      analyze: opts.analyze,
      splitSentences: opts.splitSentences,
      embed: opts.embed,
      countTokens: opts.countTokens,
      vectorWeight: clamp(opts.vectorWeight ?? 0.3, 0, 1),
      maxSentences: Math.max(1, Math.floor(opts.maxSentences ?? 5)),
      minScore: opts.minScore ?? 0.08,
      relativeScore: opts.relativeScore ?? 0.6,
      minCoverage: opts.minCoverage ?? 0.3,
      minCosine: opts.minCosine ?? 0.85,
      maxSentenceChars: opts.maxSentenceChars ?? 480,
      maxAnswerChars: opts.maxAnswerChars ?? 1600,
      maxEmbed: opts.maxEmbed ?? 64,
    };
  }

  async chat(messages: ChatMessage[], options: ChatOptions = {}): Promise<ChatResult> {
    const a = await this.answer(messages, options);
    return { content: a.parts.join(''), usage: a.usage, finish_reason: a.finish };
  }

  async *stream(messages: ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatDelta> {
    const a = await this.answer(messages, options);
    const signal = options.signal;
    for (const [i, p] of a.parts.entries()) {
      if (signal?.aborted) throw abortError(this.id, signal);
      // Yield to the event loop between deltas so that a consumer can abort mid-answer.
      await new Promise<void>((r) => setImmediate(r));
      if (signal?.aborted) throw abortError(this.id, signal);
      yield i === a.parts.length - 1 ? { content: p, usage: a.usage, finish_reason: a.finish } : { content: p };
    }
    if (!a.parts.length) yield { content: '', usage: a.usage, finish_reason: a.finish };
  }

  private tokens(s: string): number {
    return this.o.countTokens ? this.o.countTokens(s) : Math.ceil(s.length / 4);
  }

  private usage(messages: ChatMessage[], content: string): Usage {
    const prompt = this.tokens(messages.map((m) => m.content ?? '').join('\n'));
    const completion = this.tokens(content);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }

  /** The answer as the pieces a stream yields (their concatenation is the content). */
  private async answer(messages: ChatMessage[], options: ChatOptions): Promise<{ parts: string[]; usage: Usage; finish: string }> {
    const signal = options.signal;
    if (signal?.aborted) throw abortError(this.id, signal);
    const a = await this.compose(messages, options);
    let finish = 'stop';
    let parts = typeof a === 'string' ? [a] : format(a.picked, a.knowledge, a.cite);
    const max = options.max_tokens;
    if (typeof max === 'number' && max > 0 && this.tokens(parts.join('')) > max) {
      finish = 'length';
      if (typeof a !== 'string') {
        // Leave out the weakest sentences until the answer fits.
        const picked = [...a.picked].sort((x, y) => y.score - x.score || x.passage - y.passage || x.index - y.index);
        while (picked.length > 1 && this.tokens(format(picked, a.knowledge, a.cite).join('')) > max) picked.pop();
        parts = format(picked, a.knowledge, a.cite);
      }
      const content = parts.join('');
      if (this.tokens(content) > max) {
        let n = Math.min(content.length, max * 4);
        while (n > 0 && this.tokens(content.slice(0, n)) > max) n = Math.floor(n * 0.9);
        parts = [content.slice(0, n)];
      }
    }
    // Stop sequences end the answer where they first appear.
    for (const s of options.stop ?? []) {
      const at = s ? parts.join('').indexOf(s) : -1;
      if (at >= 0) parts = cutParts(parts, at);
    }
    return { parts, usage: this.usage(messages, parts.join('')), finish };
  }

  /** A fixed answer, or the sentences picked to answer from. */
  private async compose(
    messages: ChatMessage[],
    options: ChatOptions,
  ): Promise<string | { picked: Candidate[]; knowledge: KnowledgeItem[]; cite: boolean }> {
    const system = messages.filter((m) => m.role === 'system').map((m) => m.content ?? '').join('\n\n');
    const internal = this.internalPrompt(system, messages);
    if (internal !== undefined) return internal;
    const empty = options.empty_response?.trim() ? options.empty_response : undefined;
    const knowledge = options.knowledge ?? parseKnowledge(system);
    if (!knowledge) return empty ?? NO_KNOWLEDGE_ANSWER;
    const users = messages.filter((m) => m.role === 'user').map((m) => (m.content ?? '').replace(/##\d+\$\$/g, ''));
    const question = users[users.length - 1] ?? '';
    // Cite unless a system prompt is there and asks for no citations (RAGFlow adds the
    // citation rules, which name `[ID:i]`, only when quoting is on).
    const cite = !system || /\[ID:/i.test(system);
    const picked = await this.select(knowledge, question, users.slice(0, -1), options.signal);
    if (!picked.length) return empty ?? NOT_FOUND_ANSWER;
    return { picked, knowledge, cite };
  }

  /** RAGFlow's internal prompts (question refinement, keywords), should a caller send them anyway. */
  private internalPrompt(system: string, messages: ChatMessage[]): string | undefined {
    if (/Rewrite the user's latest question|Generate a full user question/i.test(system)) {
      const turns = [...system.matchAll(/^USER:\s*(.+)$/gim)].map((m) => m[1]!.trim());
      const users = messages.filter((m) => m.role === 'user' && !/^\s*Output:\s*$/i.test(m.content ?? ''));
      return turns[turns.length - 1] ?? users[users.length - 1]?.content.trim() ?? '';
    }
    const kw = /Extract the (\d+)? ?most important keywords/i.exec(system);
    if (kw) {
      const n = Number(kw[1] ?? 3) || 3;
      const textAt = system.search(/^#{1,6}\s*Text\b.*$/im);
      const text = textAt >= 0 ? system.slice(textAt).replace(/^.*\n/, '') : system;
      return this.keywords(text, n).join(', ');
    }
    return undefined;
  }

  /** The `n` most frequent content words of `text` (first seen wins ties), one per stem. */
  private keywords(text: string, n: number): string[] {
    const seen = new Map<string, { word: string; count: number; first: number }>();
    let i = 0;
    for (const m of text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu)) {
      const stem = this.o.analyze(m[0]).join(' ');
      if (!stem) continue;
      const e = seen.get(stem);
      if (e) e.count++;
      else seen.set(stem, { word: m[0], count: 1, first: i++ });
    }
    return [...seen.values()].sort((a, b) => b.count - a.count || a.first - b.first).slice(0, n).map((e) => e.word);
  }

  /** Question terms and weights: the last user turn, and a short follow-up borrows the turn before. */
  private questionTerms(question: string, earlier: string[]): { terms: Map<string, number>; kind: 'date' | 'number' | null } {
    const q = new Map<string, number>();
    let kind: 'date' | 'number' | null = DATE_Q.test(question) ? 'date' : NUMBER_Q.test(question) ? 'number' : null;
    // "What year …", "by what date …": the word names the kind of answer, not a term to match.
    const typed = TYPED_Q.exec(question) ?? COUNT_Q.exec(question);
    const typeTerms = new Set(typed ? this.o.analyze(typed[2]!) : []);
    if (typed) kind = /date|year|day|month|time/i.test(typed[2]!) ? 'date' : 'number';
    // "How long", "how far", "how old": the adjective names the kind of answer too.
    const how = NUMBER_Q.exec(question);
    if (how) for (const t of this.o.analyze(how[1]!)) typeTerms.add(t);
    // The focus: the first term after "what", "which", "how many" … ("how many fatalities").
    const focus = FOCUS_Q.exec(question);
    const focusTerm = focus ? this.o.analyze(question.slice(focus.index + focus[0].length)).find((t) => !typeTerms.has(t)) : undefined;
    for (const t of this.o.analyze(question)) if (!typeTerms.has(t)) q.set(t, t === focusTerm ? FOCUS_WEIGHT : 1);
    const prev = earlier[earlier.length - 1];
    if (prev && (q.size === 0 || (q.size <= 4 && PRONOUN.test(question)))) {
      const w = q.size === 0 ? 0.6 : 0.3;
      for (const t of this.o.analyze(prev)) if (!q.has(t)) q.set(t, w);
    }
    return { terms: q, kind };
  }

  private async select(knowledge: KnowledgeItem[], question: string, earlier: string[], signal?: AbortSignal): Promise<Candidate[]> {
    const o = this.o;
    const { terms: qTerms, kind: qKind } = this.questionTerms(question, earlier);
    const qSet = new Set(qTerms.keys());
    const cands: Candidate[] = [];
    const seenText = new Set<string>();
    const boiler = boilerplate(knowledge);
    for (const [p, k] of knowledge.entries()) {
      let content = String(k.content ?? '');
      if (boiler.size) content = content.split('\n').filter((l) => !boiler.has(lineKey(l))).join('\n');
      const sentences = o.splitSentences(content, { maxChars: o.maxSentenceChars });
      // The document's title is weak context for all its sentences.
      const docTitle = k.title ? this.o.analyze(k.title.replace(/\.[a-z0-9]{1,5}$/i, '').replace(/[_-]+/g, ' ')) : [];
      let title: string[] = [];
      let prev: { unit: number; terms: string[] } | null = null;
      for (const [index, s] of sentences.entries()) {
        const long = s.kind === 'record' && s.fields && (s.fields.length > 6 || s.text.length > o.maxSentenceChars);
        const text = long ? this.compressRecord(s.fields!, qSet, o.maxSentenceChars) : s.text;
        const terms = this.o.analyze(scoringText(text));
        if (!terms.length) continue;
        // A title gives its terms to the sentences under it; it is not quoted itself.
        if (isTitle(s, index < sentences.length - 1)) {
          title = terms;
          prev = null;
          continue;
        }
        const context = new Map<string, number>();
        for (const t of docTitle) context.set(t, DOC_TITLE_CONTEXT);
        for (const t of title) context.set(t, TITLE_CONTEXT);
        if (prev && prev.unit === s.unit && ANAPHOR.test(s.text)) for (const t of prev.terms) context.set(t, ANAPHOR_CONTEXT);
        prev = { unit: s.unit, terms };
        // The same sentence in two passages (overlapping chunks): keep the first.
        const key = text.toLowerCase().replace(/\s+/g, ' ');
        if (seenText.has(key)) continue;
        seenText.add(key);
        cands.push({ passage: p, index, sentence: s, text: displayText(text), terms, context, term: 0, coverage: 0, cosine: 0, score: 0 });
      }
    }
    if (!cands.length || (!qTerms.size && !o.embed)) return [];

    // BM25 over the sentences, normalised by the question's upper bound.
    const df = new Map<string, number>();
    let totalLen = 0;
    for (const c of cands) {
      totalLen += c.terms.length;
      for (const t of new Set(c.terms)) if (qTerms.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
    }
    const n = cands.length;
    const avg = totalLen / n;
    const idf = (t: string) => Math.log(1 + (n - (df.get(t) ?? 0) + 0.5) / ((df.get(t) ?? 0) + 0.5));
    let bound = 0;
    for (const [t, w] of qTerms) bound += w * idf(t) * (K1 + 1);
    for (const c of cands) {
      if (!bound) break;
      const tf = new Map<string, number>();
      for (const t of c.terms) if (qTerms.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
      if (!tf.size) continue; // context alone never makes a sentence relevant
      const norm = K1 * (1 - B + (B * c.terms.length) / avg);
      let s = 0;
      for (const [t, w] of qTerms) {
        const f = tf.get(t);
        if (f) s += w * idf(t) * ((f * (K1 + 1)) / (f + norm));
        else if (c.context.has(t)) s += c.context.get(t)! * w * idf(t) * ((K1 + 1) / (1 + norm));
      }
      let cov = 0;
      for (const [t, w] of qTerms) if (tf.has(t)) cov += w * idf(t);
      else if (c.context.has(t)) cov += c.context.get(t)! * w * idf(t);
      c.coverage = cov / (bound / (K1 + 1));
      let score = s / bound;
      // Echoes of the question say nothing new; very short lines rarely answer.
      const novel = new Set(c.terms.filter((t) => !qTerms.has(t))).size;
      if (novel === 0) score *= 0.4;
      else if (novel < 3) score *= 0.7 + 0.1 * novel;
      // Code and grammar (ABNF, markup) rarely answer in words.
      if (c.sentence.kind !== 'record' && c.sentence.kind !== 'row' && symbolShare(c.text) > 0.08) score *= 0.5;
      if (qKind === 'date' && DATE.test(c.text)) score *= 1.3;
      else if (qKind && /\d/.test(c.text)) score *= 1.15;
      c.term = Math.min(1, score);
    }

    const w = o.embed ? o.vectorWeight : 0;
    if (w > 0 && o.embed && question.trim()) {
      const order = [...cands].sort((a, b) => b.term - a.term || a.passage - b.passage || a.index - b.index).slice(0, o.maxEmbed);
      const vecs = await o.embed([question, ...order.map((c) => scoringText(c.text))]);
      if (signal?.aborted) throw abortError(this.id, signal);
      const qv = vecs[0];
      if (qv) for (const [i, c] of order.entries()) c.cosine = Math.max(0, dot(qv, vecs[i + 1]));
    }

    const np = Math.max(1, knowledge.length);
    const relevant: Candidate[] = [];
    for (const c of cands) {
      if (c.term <= 0 && c.cosine < o.minCosine) continue;
      const content = (1 - w) * c.term + w * c.cosine;
      if (content < o.minScore) continue;
      c.score = content + RANK_BONUS * (1 - c.passage / np);
      relevant.push(c);
    }
    // Answerable: some sentence holds enough of the question (or is very close in meaning).
    if (!relevant.some((c) => c.coverage >= o.minCoverage || c.cosine >= o.minCosine)) return [];
    relevant.sort((a, b) => b.score - a.score || a.passage - b.passage || a.index - b.index);
    const floor = relevant[0]!.score * o.relativeScore;

    const picked: Candidate[] = [];
    let chars = 0;
    for (const c of relevant) {
      if (picked.length >= o.maxSentences || c.score < floor) break;
      if (picked.length && chars + c.text.length > o.maxAnswerChars) continue;
      if (picked.some((p) => nearDuplicate(p.terms, c.terms))) continue;
      picked.push(c);
      chars += c.text.length;
    }
    // A sentence that refers back brings the one before it (same paragraph).
    const byKey = new Map(cands.map((c) => [`${c.passage}:${c.index}`, c]));
    for (const c of [...picked]) {
      if (!ANAPHOR.test(c.text) || c.sentence.kind !== 'prose') continue;
      const prev = byKey.get(`${c.passage}:${c.index - 1}`);
      if (!prev || prev.sentence.unit !== c.sentence.unit || picked.includes(prev)) continue;
      if (chars + prev.text.length > o.maxAnswerChars * 1.25) continue;
      prev.score = Math.max(prev.score, c.score); // kept as long as the sentence that needs it
      picked.push(prev);
      chars += prev.text.length;
    }
    return picked;
  }

  /** A long record shown by its first field and the fields that hold a question term. */
  private compressRecord(fields: string[], q: Set<string>, max: number): string {
    const keep = fields.filter((f, i) => i === 0 || this.o.analyze(f).some((t) => q.has(t)));
    const text = keep.join('; ');
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
  }
}

const lineKey = (l: string) => l.trim().replace(/\d+/g, '#').replace(/\s+/g, ' ').toLowerCase();

/** Running headers and footers: short lines that recur (numbers aside) three times or more. */
function boilerplate(knowledge: KnowledgeItem[]): Set<string> {
  const count = new Map<string, number>();
  for (const k of knowledge) {
    for (const l of String(k.content ?? '').split('\n')) {
      const t = l.trim();
      if (t.length < 8 || t.length > 100 || !/\p{L}{2}/u.test(t)) continue;
      const key = lineKey(t);
      count.set(key, (count.get(key) ?? 0) + 1);
    }
  }
  const out = new Set<string>();
  for (const [k, n] of count) if (n >= 3) out.add(k);
  return out;
}

/** A heading: a short line of its own, without closing punctuation, with text after it. */
function isTitle(s: Sentence, followed: boolean): boolean {
  if (!followed || s.kind === 'record' || s.kind === 'row') return false;
  const words = s.text.split(/\s+/).length;
  if (words > 12 || /[.!?。！？:;]["'”’)\]]*$/.test(s.text)) return false;
  if (/^[^:：]{1,60}[:：]\s*\S/.test(s.text)) return false; // "Key: value" is content
  if (s.kind === 'line') return true;
  // A prose unit in capitals ("CHAPTER 2 – APPOINTMENT …").
  const letters = s.text.replace(/[^\p{L}]/gu, '');
  return letters.length >= 3 && letters === letters.toUpperCase();
}

/** Share of the non-space characters that are code or grammar punctuation. */
function symbolShare(s: string): number {
  const t = s.replace(URL, '').replace(/\s+/g, '');
  if (!t) return 0;
  return (t.match(/[=<>*/\\[\]{}|@%^~`#"()]/g)?.length ?? 0) / t.length;
}

/** Long URLs (tracking links) shortened to their host; the rest as written. */
function displayText(s: string): string {
  return s.replace(URL, (u) => (u.length > 80 ? `${u.slice(0, u.indexOf('/', u.indexOf('//') + 2) + 1 || 60)}…${u.endsWith('>') ? '>' : ''}` : u));
}

/** Groups by passage (best passage first), document order inside one, ` [ID:n]` after each group. */
function format(picked: Candidate[], knowledge: KnowledgeItem[], cite: boolean): string[] {
  const groups = new Map<number, Candidate[]>();
  for (const c of picked) {
    const g = groups.get(c.passage);
    if (g) g.push(c);
    else groups.set(c.passage, [c]);
  }
  const best = (g: Candidate[]) => Math.max(...g.map((c) => c.score));
  const ordered = [...groups.values()].sort((a, b) => best(b) - best(a) || a[0]!.passage - b[0]!.passage);
  const parts: string[] = [];
  for (const [gi, g] of ordered.entries()) {
    g.sort((a, b) => a.index - b.index);
    for (const [i, c] of g.entries()) {
      let sep = '';
      if (i > 0) {
        const prev = g[i - 1]!;
        const sameUnit = prev.sentence.unit === c.sentence.unit;
        const flows = prev.sentence.kind === 'prose' && c.sentence.kind === 'prose' && /[.!?。！？:;]["'”’)\]]*(?:\[[^\]\s]{1,12}\])*$/.test(prev.text);
        sep = sameUnit || flows ? ' ' : '\n';
      } else if (gi > 0) sep = '\n\n';
      let piece = sep + c.text.trim();
      if (i === g.length - 1 && cite) piece += ` [ID:${knowledge[c.passage]!.id}]`;
      parts.push(piece);
    }
  }
  return parts;
}

/** Pieces cut before character `at` of their concatenation. */
function cutParts(parts: string[], at: number): string[] {
  const out: string[] = [];
  let pos = 0;
  for (const p of parts) {
    if (pos + p.length <= at) out.push(p);
    else {
      if (at > pos) out.push(p.slice(0, at - pos));
      break;
    }
    pos += p.length;
  }
  return out;
}

/** What the scorer reads: no URLs, no `[12]` reference marks, markdown links as their text. */
function scoringText(s: string): string {
  return s
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(URL, ' ')
    .replace(/\[\d{1,3}\]/g, ' ');
}

function nearDuplicate(a: string[], b: string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  let inter = 0;
  for (const t of sa) if (sb.has(t)) inter++;
  const union = sa.size + sb.size - inter;
  return union > 0 && inter / union >= 0.75;
}

function dot(a: Float32Array, b: Float32Array | undefined): number {
  if (!b || a.length !== b.length) return 0;
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

function clamp(x: number, lo: number, hi: number): number {
  return Number.isFinite(x) ? Math.min(hi, Math.max(lo, x)) : lo;
}
