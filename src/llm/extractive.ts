/**
 * `ragloom-extractive@Builtin`: the chat model used when none is configured. It runs offline and
 * never writes text of its own: it answers with one to three sentences of the retrieved passages,
 * each followed by the `[ID:n]` of its passage, or declines.
 *
 * How a sentence is scored (the passages come split by the injected `splitSentences`):
 * - Terms: BM25 of the question's terms (the retrieval analyzer's stems, no stop words), idf over
 *   the sentences of the given passages, divided by the question's own bound Σ idf·(k1+1) so that
 *   it lies in [0,1]. The question's focus ("how many *fatalities*") weighs more; words that only
 *   name the kind of answer ("what *year*") are not matched. The terms of the title a sentence
 *   stands under, of its document's name, and of the sentence before one that refers back ("It
 *   is …") count at a reduced weight.
 * - Related words (`related`: WordNet's and GloVe's, src/llm/related-terms.ts): a question term
 *   the sentence lacks counts at the weight of the best related stem it holds ("compulsory" for
 *   "mandatory"), times `relatedWeight`.
 * - Feedback expansion, as retrieval's RM3: the terms the passages share most (each passage
 *   weighted by its retrieval score) are added to the question at `feedbackWeight`.
 * - Meaning: the cosine of the sentence and the question in the datasets' embedding model, mixed
 *   in at `vectorWeight` (every candidate sentence is embedded).
 * - What retrieval knows: a passage's retrieval similarity (else its rank) is a prior
 *   (`passageWeight`); a sentence next to one that holds the question's terms gains a little.
 * - The kind of answer asked for: "how many / how much" prefers a sentence with a number,
 *   "when / what year" a date, "how long" a duration, "who" a name, "where" a place.
 * - Or, with `scorer`, learned weights over these figures and more (`SENTENCE_FEATURES`;
 *   scripts/sentence-scorer/train.ts). Off by default: across folds of the tuning part they
 *   answered no more than the hand weights (docs/benchmarks.md, "Fifth pass").
 *
 * Only the first `topDocuments` (2) documents of the ranking are quoted. The best sentence is
 * always quoted when any sentence is supported (it holds a question term, or its cosine reaches
 * `minCosine`) and its score reaches `minScore`; up to two more follow when they
 * score at least `relativeScore` of it and come from the same document. A sentence that refers
 * back brings the one before it. Otherwise the model declines with the chat's `empty_response`
 * (without any citation). It declines too, however close a sentence comes, when the question names
 * (a capital, a digit) a term no chunk holds (`ChatOptions.unknown_terms`, from retrieval), or when
 * the best sentence has neither the question's words nor its meaning: it holds under `minCover` of
 * the question's idf-weighted terms and its cosine is under `weakCosine` (bench/qa-decline.ts). With no knowledge at all it says that it answers only from a knowledge
 * base. Same input, same bytes.
 */
import type { ChatDelta, ChatMessage, ChatModel, ChatOptions, ChatResult, KnowledgeItem, PassageSentence, Usage } from './types.js';
import { ChatModelError } from './errors.js';
import type { RelatedTerms } from './related-terms.js';

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
  splitSentences: (text: string, opts?: { maxChars?: number }) => PassageSentence[];
  /** Unit vectors for texts (the datasets' embedding model); adds meaning to term overlap. */
  embed?: (texts: string[]) => Promise<Float32Array[]>;
  /** Token counter for `usage` and `max_tokens`; else characters / 4. */
  countTokens?: (text: string) => number;
  /**
   * Stems related to a stem (WordNet's synonyms, derivations, similar words: src/llm/related-terms.ts),
   * weighted in (0,1]: a sentence holding one gets that share of the question term's credit, times `relatedWeight`.
   */
  related?: RelatedTerms;
  /** Share of a question term's credit that a related stem earns (× its weight), when `related` is given. @default 1 */
  relatedWeight?: number;
  /** Share of cosine similarity in a sentence's score, when `embed` is given. @default 0.4 */
  vectorWeight?: number;
  /** Weight of the feedback expansion's terms against the question's. @default 0.3 */
  feedbackWeight?: number;
  /** Expansion terms drawn from the passages. @default 10 */
  feedbackTerms?: number;
  /** How much a passage's retrieval score (else its rank) scales its sentences, in [0,1]. @default 0.4 */
  passageWeight?: number;
  /** Sentences are quoted only from the first this many documents of the ranking (≥ 1). @default 2 */
  topDocuments?: number;
  /** Most sentences quoted, in [1,3]. @default 3 */
  maxSentences?: number;
  /** Lowest score the best sentence may have, in [0,1]. @default 0.2 */
  minScore?: number;
  /** Further sentences must score at least this share of the best one. @default 0.75 */
  relativeScore?: number;
  /**
   * The best sentence is quoted only when it holds at least this share of the question's
   * information (idf-weighted terms) or its cosine with the question reaches `weakCosine`
   * (bench/qa-decline.ts). @default 0.4
   */
  minCover?: number;
  /** See `minCover`. @default 0.45 */
  weakCosine?: number;
  /** Share of the sentence's window (its title and the sentences around it) in its cosine with the question. @default 0.3 */
  windowWeight?: number;
  /** A neighbour holding the question's terms lends this share of its term score. @default 0.15 */
  neighbourWeight?: number;
  /** Cosine similarity that makes a sentence supported without any question term. @default 0.6 */
  minCosine?: number;
  /** Longest sentence quoted whole; longer ones are cut. @default 480 */
  maxSentenceChars?: number;
  /** Most sentences embedded per answer (the best by terms, then by passage). @default 256 */
  maxEmbed?: number;
  /**
   * Learned weights in place of the hand-weighted score (`SENTENCE_FEATURES`, scripts/sentence-scorer/train.ts):
   * a sentence scores exp(w·x − the best's w·x), so the best scores 1 and `relativeScore` is a margin in w·x;
   * `minScore` still applies to the hand-weighted score. Omitted: the hand weights.
   */
  scorer?: SentenceScorer;
  /** @default 'ragloom-extractive@Builtin' */
  id?: string;
  /** Context window reported to the caller (it fits knowledge and history to it). @default 32768 */
  maxTokens?: number;
}

/**
 * What a learned scorer reads of a candidate sentence, in this order (values computed in `scored`):
 * the hand-weighted score (its log: weight 1 there and 0 elsewhere gives the hand-weighted model's
 * choices exactly) and its parts, where the sentence and its passage rank, and its shape.
 */
export const SENTENCE_FEATURES = [
  'logHand', 'q', 'e', 'cosine', 'cosineGap', 'cosineRank', 'termRank', 'prior', 'passageRank', 'topDocument', 'near', 'nearHolds',
  'cue', 'kindHeld', 'kindMissing', 'cover', 'passageCover', 'hitShare', 'related', 'contextOnly', 'first', 'position', 'length', 'prose',
] as const;
export type SentenceFeature = (typeof SENTENCE_FEATURES)[number];

/** A linear scorer over `SENTENCE_FEATURES`: one weight per feature, in that order. */
export interface SentenceScorer {
  weights: readonly number[];
}

/** One candidate sentence as a learned scorer sees it (`ExtractiveChatModel.sentenceFeatures`). */
export interface SentenceFeatures {
  text: string;
  /** In `SENTENCE_FEATURES` order. */
  features: number[];
  /** Whether the model may quote it: it is supported and its document is one of the first `topDocuments`. */
  eligible: boolean;
}

type AnswerKind = 'number' | 'date' | 'time' | 'duration' | 'person' | 'place' | null;

interface Candidate {
  passage: number;
  /** Order in the passage. */
  index: number;
  sentence: PassageSentence;
  /** The text quoted (a long record: its first and relevant fields). */
  text: string;
  terms: string[];
  /** Terms of the title above it and, for a sentence that refers back, of the one before: term → weight. */
  context: Map<string, number>;
  /** The title it stands under ('' when none). */
  title: string;
  /** Question terms the sentence itself holds (a related stem counts). */
  hits: number;
  /** Question terms the sentence words differently: question term → the credit share of its best related stem. */
  relatedHits?: Map<string, number>;
  term: number;
  /** Cosine similarity to the question (0 when not embedded). */
  cosine: number;
  /** Share of the question's information (idf-weighted terms) the sentence, its title or its document's name holds. */
  cover: number;
  /** The same share over the sentence's whole passage. */
  passageCover: number;
  /** Whether it holds the kind of answer asked for (a number, date, duration, time, name, place); true when none is asked. */
  typed: boolean;
  /** What the score is made of: question terms, expansion terms, the passage prior, the answer-kind cue, the neighbours' terms. */
  f?: { q: number; e: number; prior: number; cue: number; near: number };
  /** The features a learned scorer reads (`SENTENCE_FEATURES`). */
  x?: number[];
  /** The hand-weighted score (what `minScore` applies to). */
  hand: number;
  score: number;
}

const K1 = 1.2;
const B = 0.5;
/** A sentence without the number, date or time a question asks for. */
const MISSING = 0.85;
const NUMBER_Q = /\bhow (many|much|old|often|far|big|large|tall|high|fast|heavy|wide|deep)\b/i;
const DURATION_Q = /\bhow long\b|\bwithin how\b|\bfor how\b|\bhow soon\b/i;
/**
 * "When …?", "…, and when was it chosen?", "since when": a date is asked for. A "when" inside the
 * question ("what should I do *when* a payment …", "where does it go *when* no file is named") opens
 * a condition, not the question.
 */
const DATE_Q = /^\s*when\b|(?:[,;]\s*|\b(?:and|or|but|since|until|till|by)\s+)when\b|\b(?:what|which) (?:day|date|year|month)\b/i;
const TIME_Q = /\b(?:what|which|at what) (?:time|hours?)\b|\bwhat hours\b/i;
const TIME = /\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?[ap]\.?m\.?(?=\W|$)/i;
const PERSON_Q = /^\s*(?:who|whom|whose)\b|\bby whom\b/i;
const PLACE_Q = /^\s*where\b|\bin which (?:city|country|state|place)\b/i;
/** "what year", "by which date": the noun names the answer's kind. */
const TYPED_Q = /\b(what|which)\s+(dates?|years?|days?|months?|times?|numbers?|amounts?|percentages?|price|age)\b/i;
/** "the number of …", "the total amount of …": a count is asked for. */
const COUNT_Q = /\b(the|total|overall|combined)\s+(number|amount|count)\s+of\b/i;
const FOCUS_Q = /\b(?:what|which|whose|how (?:many|much))\b(?:\s+(?:is|are|was|were|does|do|did|the|a|an|of))*/i;
const FOCUS_WEIGHT = 1.5;
/** Verbs of a question that are never its focus ("what *happens* to …"). */
const QUESTION_VERBS = new Set(['happen', 'mean', 'do', 'doe', 'make', 'call', 'name', 'use', 'need', 'get', 'go']);
/** "What is X?", "What are the Xs?": a definition is asked for. */
const DEFINE_Q = /^\s*(?:what|which)\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?([^?]{2,60}?)\s*\??\s*$/i;
/** A sentence that defines what it opens with: "X means …", "“X” is …". */
const DEFINES = /^(?:\(?[\divxlc]{1,4}(?:\.\d{1,3})*[.)]?\s+)?["“'‘`]?([^"”’`]{1,60}?)["”’'`]?\s+(?:means|is|are|refers to|stands for)\b/i;
const TITLE_CONTEXT = 0.35;
const DOC_TITLE_CONTEXT = 0.25;
const ANAPHOR_CONTEXT = 0.5;
const MONTH = '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const DATE = new RegExp(`\\b${MONTH}\\.?\\s+\\d{1,2}\\b|\\b\\d{1,2}\\s+${MONTH}\\b|\\b(?:1[5-9]|20)\\d{2}\\b|\\b\\d{1,4}[-/.]\\d{1,2}[-/.]\\d{1,4}\\b`, 'i');
const NUMBER_WORDS = 'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred|thousand|million|billion';
const NUMBER = new RegExp(`\\d|\\b(?:${NUMBER_WORDS})\\b`, 'i');
const DURATION = new RegExp(`(?:\\d+|\\b(?:${NUMBER_WORDS}))[\\s-]+(?:business\\s+|calendar\\s+)?(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\\b`, 'i');
/** Two capitalised words in a row, not at the start of the sentence: a name. */
const NAME = /(?<=\S\s+)\p{Lu}[\p{L}.'-]+(?:\s+\p{Lu}\.?)?\s+\p{Lu}[\p{L}'-]+/u;
const PLACE = /\b(?:in|at|from|near|to)\s+\p{Lu}[\p{L}-]+|\b\d+\s+\p{Lu}[\p{L}]+\s+(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Drive|Dr|Lane|Way)\b/u;
const PRONOUN = /\b(?:it|its|they|them|their|this|that|these|those|he|she|his|her|him|there|one|ones)\b/i;
/** A sentence that leans on the one before: it opens with a link word ("Second, …" continues an enumeration) or has a pronoun early on. */
const ANAPHOR = /^(?:(?:such|the latter|the former|however|therefore|thus|also|in addition|furthermore|moreover|as a result|for example|for instance|but|and|so|then|second(?:ly)?|third(?:ly)?|finally|lastly)\b|(?:\S+\s+){0,4}(?:it|its|this|these|those|they|their|them|he|she|his|her|him)\b)/i;
/** A sentence that ends by introducing what follows: a colon, or no closing punctuation at all. */
const INTRODUCES = /(?:[:：]|[\p{L}\p{N})\]`])$/u;
/** A grammar rule or an assignment: "addr-spec = local-part "@" domain", "similarity = w · …". */
const DEFINITION_LINE = /^[\p{L}\p{N}_.-]+\s+(?:=|::=|:=|=\/)\s/u;
const CAPTION = /(?:^|:\s*)\([^()]{3,}\)$/;
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

type Options = Required<Omit<ExtractiveChatModelOptions, 'embed' | 'countTokens' | 'related' | 'scorer' | 'id' | 'maxTokens'>> &
  Pick<ExtractiveChatModelOptions, 'embed' | 'countTokens' | 'related' | 'scorer'>;

export class ExtractiveChatModel implements ChatModel {
  readonly id: string;
  readonly maxTokens: number;
  /** It cannot rewrite questions, extract keywords or call tools: callers skip those steps. */
  readonly capabilities = { rewrite: false, keywords: false, tools: false } as const;
  private readonly o: Options;

  constructor(opts: ExtractiveChatModelOptions) {
    if (typeof opts?.analyze !== 'function') throw new TypeError('ExtractiveChatModel needs an `analyze` function');
    if (typeof opts.splitSentences !== 'function') throw new TypeError('ExtractiveChatModel needs a `splitSentences` function');
    const topDocuments = opts.topDocuments ?? 2;
    if (!Number.isInteger(topDocuments) || topDocuments < 1) throw new TypeError(`ExtractiveChatModel: topDocuments must be an integer ≥ 1, got ${String(opts.topDocuments)}`);
    if (opts.scorer && (opts.scorer.weights.length !== SENTENCE_FEATURES.length || !opts.scorer.weights.every(Number.isFinite))) {
      throw new TypeError(`ExtractiveChatModel: scorer.weights must be ${SENTENCE_FEATURES.length} finite numbers (SENTENCE_FEATURES), got ${opts.scorer.weights.length}`);
    }
    this.id = opts.id ?? EXTRACTIVE_MODEL_ID;
    this.maxTokens = opts.maxTokens ?? 32768;
    this.o = {
      analyze: opts.analyze,
      splitSentences: opts.splitSentences,
      embed: opts.embed,
      countTokens: opts.countTokens,
      related: opts.related,
      scorer: opts.scorer,
      relatedWeight: clamp(opts.relatedWeight ?? 1, 0, 1),
      vectorWeight: clamp(opts.vectorWeight ?? 0.4, 0, 1),
      feedbackWeight: clamp(opts.feedbackWeight ?? 0.3, 0, 1),
      feedbackTerms: Math.max(0, Math.floor(opts.feedbackTerms ?? 10)),
      passageWeight: clamp(opts.passageWeight ?? 0.4, 0, 1),
      topDocuments,
      maxSentences: clamp(Math.floor(opts.maxSentences ?? 3), 1, 3),
      minScore: opts.minScore ?? 0.2,
      relativeScore: opts.relativeScore ?? 0.75,
      minCosine: opts.minCosine ?? 0.6,
      windowWeight: clamp(opts.windowWeight ?? 0.3, 0, 1),
      neighbourWeight: clamp(opts.neighbourWeight ?? 0.15, 0, 1),
      minCover: opts.minCover ?? 0.4,
      weakCosine: opts.weakCosine ?? 0.45,
      maxSentenceChars: opts.maxSentenceChars ?? 480,
      maxEmbed: opts.maxEmbed ?? 256,
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
    if (this.namesUnknown(question, options.unknown_terms)) return empty ?? NOT_FOUND_ANSWER;
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
  private questionTerms(question: string, earlier: string[]): { terms: Map<string, number>; kind: AnswerKind; define?: string[] } {
    const q = new Map<string, number>();
    let kind: AnswerKind = TIME_Q.test(question) ? 'time' : DURATION_Q.test(question) ? 'duration' : DATE_Q.test(question) ? 'date' : NUMBER_Q.test(question) ? 'number'
      : PERSON_Q.test(question) ? 'person' : PLACE_Q.test(question) ? 'place' : null;
    // "What year …", "by what date …": the word names the kind of answer, not a term to match.
    const typed = TYPED_Q.exec(question) ?? COUNT_Q.exec(question);
    const typeTerms = new Set(typed ? this.o.analyze(typed[2]!) : []);
    if (typed) kind = /^times?$/i.test(typed[2]!) ? 'time' : /date|year|day|month/i.test(typed[2]!) ? 'date' : 'number';
    // "How long", "how far", "how old": the adjective names the kind of answer too.
    const how = NUMBER_Q.exec(question) ?? /\bhow (long|soon)\b/i.exec(question);
    if (how) for (const t of this.o.analyze(how[1]!)) typeTerms.add(t);
    // The focus: the first term after "what", "which", "how many" … ("how many fatalities").
    const focus = FOCUS_Q.exec(question);
    const focusTerm = focus ? this.o.analyze(question.slice(focus.index + focus[0].length)).find((t) => !typeTerms.has(t) && !QUESTION_VERBS.has(t)) : undefined;
    for (const t of this.o.analyze(question)) if (!typeTerms.has(t)) q.set(t, t === focusTerm ? FOCUS_WEIGHT : 1);
    const prev = earlier[earlier.length - 1];
    if (prev && (q.size === 0 || (q.size <= 4 && PRONOUN.test(question)))) {
      const w = q.size === 0 ? 0.6 : 0.3;
      for (const t of this.o.analyze(prev)) if (!q.has(t)) q.set(t, w);
    }
    // "What is X?": a sentence that defines X answers it.
    const def = kind ? null : DEFINE_Q.exec(question);
    const define = def ? this.o.analyze(def[1]!) : [];
    return define.length ? { terms: q, kind, define } : { terms: q, kind };
  }

  /** How well a sentence fits the kind of answer asked for (see `cue`), or defines what is asked about. */
  private fit(kind: AnswerKind, define: string[] | undefined, text: string): number {
    if (define) {
      const m = DEFINES.exec(text);
      const head = m ? new Set(this.o.analyze(m[1]!)) : null;
      return head && define.every((t) => head.has(t)) ? 1.25 : 1;
    }
    return cue(kind, text);
  }

  /** The candidate sentences of the passages, with their context terms (titles are context, not quoted). */
  private candidates(knowledge: KnowledgeItem[], qSet: Set<string>): { cands: Candidate[]; passageTerms: string[][] } {
    const o = this.o;
    const cands: Candidate[] = [];
    const passageTerms: string[][] = [];
    const seenText = new Set<string>();
    const boiler = boilerplate(knowledge);
    for (const [p, k] of knowledge.entries()) {
      let content = String(k.content ?? '');
      if (boiler.size) content = content.split('\n').filter((l) => !boiler.has(lineKey(l))).join('\n');
      const sentences = o.splitSentences(content, { maxChars: o.maxSentenceChars });
      // The document's name is weak context for all its sentences.
      const docTitle = k.title ? o.analyze(k.title.replace(/\.[a-z0-9]{1,5}$/i, '').replace(/[_-]+/g, ' ')) : [];
      const all: string[] = [];
      let title: string[] = [];
      let titleText = '';
      let prev: { unit: number; terms: string[] } | null = null;
      for (const [index, s] of sentences.entries()) {
        const long = s.kind === 'record' && s.fields && (s.fields.length > 6 || s.text.length > o.maxSentenceChars);
        const text = long ? this.compressRecord(s.fields!, qSet, o.maxSentenceChars) : s.text;
        const terms = o.analyze(scoringText(text));
        if (!terms.length) continue;
        all.push(...terms);
        // A title gives its terms to the sentences under it; it is not quoted itself.
        if (isTitle(s, index < sentences.length - 1)) {
          title = terms;
          titleText = s.text;
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
        cands.push({ passage: p, index, sentence: s, text: displayText(text), terms, context, title: titleText, hits: 0, term: 0, cosine: 0, cover: 0, passageCover: 0, typed: true, hand: 0, score: 0 });
      }
      passageTerms.push(all);
    }
    return { cands, passageTerms };
  }

  /**
   * Feedback expansion (retrieval's RM3, over the given passages): P(t|R) = Σ_p w_p·tf(t,p)/|p|,
   * w_p the passage's share of the prior; the `feedbackTerms` most probable terms not in the
   * question, weighted by their probability (summing to 1).
   */
  private expansion(passageTerms: string[][], prior: number[], q: Map<string, number>): Map<string, number> {
    const n = this.o.feedbackTerms;
    const out = new Map<string, number>();
    if (!n || this.o.feedbackWeight <= 0) return out;
    const total = prior.reduce((a, b) => a + b, 0) || 1;
    const p = new Map<string, number>();
    passageTerms.forEach((terms, i) => {
      if (!terms.length) return;
      const w = prior[i]! / total / terms.length;
      for (const t of terms) if (!q.has(t) && t.length > 1 && !/^\d+$/.test(t)) p.set(t, (p.get(t) ?? 0) + w);
    });
    const best = [...p].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, n);
    const sum = best.reduce((s, [, v]) => s + v, 0) || 1;
    for (const [t, v] of best) out.set(t, v / sum);
    return out;
  }

  /**
   * Each candidate's question terms it holds only as a related stem (`related`): the term → the
   * best related stem's weight × `relatedWeight`. Only for the question's terms that no candidate holds.
   */
  private relate(cands: Candidate[], qTerms: Map<string, number>): void {
    const { related, relatedWeight } = this.o;
    if (!related || relatedWeight <= 0) return;
    // Whether the passages use the question's own word: then a neighbour of it may be a contrast
    // ("Tuesday" for "Monday"), see `RelationWeights.gHeld`.
    const held = new Set<string>();
    for (const c of cands) for (const t of c.terms) if (qTerms.has(t)) held.add(t);
    // related stem → [question term, weight]
    const inverse = new Map<string, Array<[string, number]>>();
    for (const t of qTerms.keys()) {
      for (const [r, w] of related(t, held.has(t))) {
        if (qTerms.has(r)) continue;
        const l = inverse.get(r) ?? [];
        l.push([t, w * relatedWeight]);
        inverse.set(r, l);
      }
    }
    if (!inverse.size) return;
    for (const c of cands) {
      const own = new Set(c.terms);
      for (const x of own) {
        for (const [t, w] of inverse.get(x) ?? []) {
          if (own.has(t)) continue;
          c.relatedHits ??= new Map();
          if (w > (c.relatedHits.get(t) ?? 0)) c.relatedHits.set(t, w);
        }
      }
    }
  }

  /** Every candidate sentence of the passages, scored (see the module comment). */
  private async scored(knowledge: KnowledgeItem[], question: string, earlier: string[], signal?: AbortSignal, features = !!this.o.scorer): Promise<Candidate[]> {
    const o = this.o;
    // The related-words tables are read on the first answer, without blocking the process.
    await o.related?.ready?.();
    const { terms: qTerms, kind: qKind, define } = this.questionTerms(question, earlier);
    const { cands, passageTerms } = this.candidates(knowledge, new Set(qTerms.keys()));
    if (!cands.length || (!qTerms.size && !o.embed)) return [];

    // What retrieval knows of each passage: its similarity relative to the best one, else its rank.
    const sims = knowledge.map((k) => (typeof k.similarity === 'number' && Number.isFinite(k.similarity) ? k.similarity : NaN));
    const top = Math.max(0, ...sims.filter((x) => !Number.isNaN(x)));
    const prior = sims.map((s, i) => (top > 0 && !Number.isNaN(s) ? clamp(s / top, 0, 1) : 1 / (1 + 0.25 * i)));
    const expand = this.expansion(passageTerms, prior, qTerms);
    this.relate(cands, qTerms);

    // BM25 over the sentences: the question's terms (normalised by their bound) and the expansion's.
    const df = new Map<string, number>();
    let totalLen = 0;
    for (const c of cands) {
      totalLen += c.terms.length;
      for (const t of new Set(c.terms)) if (qTerms.has(t) || expand.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
    }
    const n = cands.length;
    const avg = totalLen / n;
    const idf = (t: string) => Math.log(1 + (n - (df.get(t) ?? 0) + 0.5) / ((df.get(t) ?? 0) + 0.5));
    let bound = 0;
    for (const [t, w] of qTerms) bound += w * idf(t) * (K1 + 1);
    let eBound = 0;
    for (const [t, w] of expand) eBound += w * idf(t) * (K1 + 1);
    for (const c of cands) {
      const tf = new Map<string, number>();
      // A term counts once: in one sentence, repeating a word says no more about the answer.
      for (const t of c.terms) if (qTerms.has(t) || expand.has(t)) tf.set(t, 1);
      const norm = K1 * (1 - B + (B * c.terms.length) / avg);
      const part = (f: number) => (f * (K1 + 1)) / (f + norm);
      let s = 0;
      for (const [t, w] of qTerms) {
        const f = tf.get(t);
        if (f) {
          s += w * idf(t) * part(f);
          c.hits++;
        } else {
          // Under its title, or worded differently (a related stem): the better of the two shares.
          const share = Math.max(c.context.get(t) ?? 0, c.relatedHits?.get(t) ?? 0);
          if (share > 0) s += share * w * idf(t) * part(1);
          if (c.relatedHits?.has(t)) c.hits++;
        }
      }
      let e = 0;
      for (const [t, w] of expand) {
        const f = tf.get(t);
        if (f) e += w * idf(t) * part(f);
      }
      // An echo of the question says nothing new, however close it is in meaning.
      const novel = new Set(c.terms.filter((t) => !qTerms.has(t))).size;
      const shape = novel === 0 ? 0.4 : novel === 1 ? 0.9 : 1;
      // A line of code or grammar (ABNF, markup, "name = …") rarely answers in words, however close it is.
      const code = c.sentence.kind === 'line' && (symbolShare(c.text) > 0.08 || DEFINITION_LINE.test(c.text)) ? 0.5 : 1;
      c.f = { q: bound ? s / bound : 0, e: eBound ? e / eBound : 0, prior: prior[c.passage]!, cue: shape * code * this.fit(qKind, define, c.text), near: 0 };
      c.term = Math.min(1, c.f.q + o.feedbackWeight * c.f.e);
    }

    // How much of what the question asks about a sentence (and its passage) holds: each question
    // term weighted by its idf over the sentences, so that a missing rare word ("CEO") weighs more
    // than a word every passage shares ("Amazon").
    // The question terms' idf once, not per sentence.
    const qIdf = [...qTerms.keys()].map((t) => [t, idf(t)] as const);
    let info = 0;
    for (const [, w] of qIdf) info += w;
    const passageSets = passageTerms.map((ts) => new Set(ts));
    for (const c of cands) {
      const own = new Set(c.terms);
      let hit = 0;
      let inPassage = 0;
      for (const [t, w] of qIdf) {
        if (own.has(t) || c.context.has(t)) {
          hit += w;
          inPassage += w;
        } else if (c.relatedHits?.has(t)) {
          hit += w * c.relatedHits.get(t)!;
          inPassage += w * c.relatedHits.get(t)!;
        } else if (passageSets[c.passage]!.has(t)) inPassage += w;
      }
      c.cover = info ? hit / info : 0;
      c.passageCover = info ? inPassage / info : 0;
      c.typed = holdsKind(qKind, c.text);
    }

    const w = o.embed ? o.vectorWeight : 0;
    if (w > 0 && o.embed && question.trim()) {
      const order = [...cands].sort((a, b) => b.term - a.term || a.passage - b.passage || a.index - b.index).slice(0, o.maxEmbed);
      // Each sentence alone, and in its window (the title it stands under, the sentences before and after).
      const at = new Map(cands.map((c) => [`${c.passage}:${c.index}`, c]));
      const window = (c: Candidate) => [c.title, at.get(`${c.passage}:${c.index - 1}`)?.text, c.text, at.get(`${c.passage}:${c.index + 1}`)?.text].filter(Boolean).join(' ');
      const ww = o.windowWeight;
      const texts = [question, ...order.map((c) => scoringText(c.text)), ...(ww > 0 ? order.map((c) => scoringText(window(c))) : [])];
      const vecs = await o.embed(texts);
      if (signal?.aborted) throw abortError(this.id, signal);
      const qv = vecs[0];
      if (qv) {
        for (const [i, c] of order.entries()) {
          const alone = Math.max(0, dot(qv, vecs[i + 1]));
          c.cosine = ww > 0 ? (1 - ww) * alone + ww * Math.max(0, dot(qv, vecs[i + 1 + order.length])) : alone;
        }
      }
    }

    const byKey = new Map(cands.map((c) => [`${c.passage}:${c.index}`, c]));
    const neighbours = (c: Candidate) => [byKey.get(`${c.passage}:${c.index - 1}`), byKey.get(`${c.passage}:${c.index + 1}`)].filter((x): x is Candidate => !!x);
    for (const c of cands) {
      const content = (1 - w) * c.term + w * c.cosine;
      const near = Math.max(0, ...neighbours(c).filter((x) => x.hits > 0).map((x) => x.term));
      c.f!.near = near;
      c.score = c.hand = (content + o.neighbourWeight * near) * (1 - o.passageWeight + o.passageWeight * c.f!.prior) * c.f!.cue;
    }
    if (features) this.describe(cands, knowledge, qTerms.size, qKind);
    if (o.scorer) {
      const wts = o.scorer.weights;
      const z = cands.map((c) => c.x!.reduce((s, v, i) => s + v * wts[i]!, 0));
      const zMax = Math.max(...z);
      for (const [i, c] of cands.entries()) c.score = Math.exp(z[i]! - zMax);
    }
    return cands;
  }

  /** Each candidate's features for a learned scorer (`SENTENCE_FEATURES`), from what `scored` computed. */
  private describe(cands: Candidate[], knowledge: KnowledgeItem[], nTerms: number, kind: AnswerKind): void {
    const rankOf = (key: (c: Candidate) => number) => {
      const order = [...cands].sort((a, b) => key(b) - key(a) || a.passage - b.passage || a.index - b.index);
      return new Map(order.map((c, i) => [c, i]));
    };
    const cosRank = rankOf((c) => c.cosine);
    const termRank = rankOf((c) => c.term);
    const maxCos = Math.max(0, ...cands.map((c) => c.cosine));
    const last = new Map<number, number>();
    const firstOf = new Map<number, Candidate>();
    for (const c of cands) {
      last.set(c.passage, Math.max(last.get(c.passage) ?? 0, c.index));
      if (!firstOf.has(c.passage)) firstOf.set(c.passage, c);
    }
    const firstDoc = knowledge[0]?.title;
    const at = new Map(cands.map((c) => [`${c.passage}:${c.index}`, c]));
    for (const c of cands) {
      const nearHolds = [at.get(`${c.passage}:${c.index - 1}`), at.get(`${c.passage}:${c.index + 1}`)].some((x) => !!x && x.hits > 0);
      let related = 0;
      for (const v of c.relatedHits?.values() ?? []) related += v;
      let contextOnly = 0;
      for (const t of c.context.keys()) if (!c.terms.includes(t)) contextOnly++;
      c.x = [
        Math.log(c.hand + 1e-6), c.f!.q, c.f!.e, c.cosine, c.cosine - maxCos, 1 / (1 + cosRank.get(c)!), 1 / (1 + termRank.get(c)!),
        c.f!.prior, 1 / (1 + c.passage), knowledge[c.passage]!.title === firstDoc ? 1 : 0, c.f!.near, nearHolds ? 1 : 0,
        Math.log(c.f!.cue), kind && c.typed ? 1 : 0, kind && !c.typed ? 1 : 0, c.cover, c.passageCover,
        nTerms ? c.hits / nTerms : 0, nTerms ? related / nTerms : 0, nTerms ? Math.min(1, contextOnly / nTerms) : 0,
        firstOf.get(c.passage) === c ? 1 : 0, c.index / Math.max(1, last.get(c.passage)!), Math.log1p(c.terms.length), c.sentence.kind === 'prose' ? 1 : 0,
      ];
    }
  }

  /** The candidates the model may quote: supported, and from the first `topDocuments` documents of the ranking. */
  private eligible(cands: Candidate[], knowledge: KnowledgeItem[]): Candidate[] {
    const top = new Set<string>();
    for (const k of knowledge) if (top.size < this.o.topDocuments) top.add(k.title);
    return cands.filter((c) => (c.hits > 0 || c.cosine >= this.o.minCosine) && top.has(knowledge[c.passage]!.title));
  }

  /** Every candidate sentence with the features a learned scorer reads (scripts/sentence-scorer/train.ts). */
  async sentenceFeatures(knowledge: KnowledgeItem[], question: string): Promise<SentenceFeatures[]> {
    const cands = await this.scored(knowledge, question, [], undefined, true);
    const ok = new Set(this.eligible(cands, knowledge));
    return cands.map((c) => ({ text: c.text, features: c.x!, eligible: ok.has(c) }));
  }

  /** The sentences to answer with: the best supported one and up to two more, or none (decline). */
  private async select(knowledge: KnowledgeItem[], question: string, earlier: string[], signal?: AbortSignal): Promise<Candidate[]> {
    const picked = await this.pick(knowledge, question, earlier, signal);
    return picked.length && this.supports(picked) ? picked : [];
  }

  /**
   * What the decline decision sees, for a question over passages: the sentences the model would
   * quote (before that decision) and the support figures of the best one. For benchmarks and tests.
   */
  async explain(knowledge: KnowledgeItem[], question: string): Promise<{ quoted: string[]; declines: boolean; support?: Support }> {
    const picked = await this.pick(knowledge, question, [], undefined);
    if (!picked.length) return { quoted: [], declines: true };
    return { quoted: picked.map((c) => c.text), declines: !this.supports(picked), support: support(picked, knowledge) };
  }

  /**
   * Whether the question names something the knowledge base never mentions: a word written with a
   * capital (not the question's first) or a digit whose term no chunk holds ("Jupiter", "747").
   * Such a question is about something else, however close its other words come.
   */
  namesUnknown(question: string, unknown: readonly string[] | undefined): boolean {
    if (!unknown?.length) return false;
    const none = new Set(unknown);
    const words = question.match(/[\p{L}\p{N}][\p{L}\p{N}'’.-]*/gu) ?? [];
    return words.some((w, i) => ((i > 0 && /^\p{Lu}/u.test(w)) || /\p{N}/u.test(w)) && this.o.analyze(w).some((t) => none.has(t)));
  }

  /** Whether the best sentence is supported enough to be quoted (see `Support`). */
  private supports(picked: Candidate[]): boolean {
    // Neither the words nor the meaning: it shares little of what the question asks about and is
    // not close to it either (only measurable with the embedding model's cosine).
    const best = picked[0]!;
    return !this.o.embed || best.cover >= this.o.minCover || best.cosine >= this.o.weakCosine;
  }

  /** The sentences to answer with, before the decision whether they answer at all. */
  private async pick(knowledge: KnowledgeItem[], question: string, earlier: string[], signal?: AbortSignal): Promise<Candidate[]> {
    const o = this.o;
    const cands = await this.scored(knowledge, question, earlier, signal);
    const byKey = new Map(cands.map((c) => [`${c.passage}:${c.index}`, c]));
    // Supported: the sentence holds a question term, or is close in meaning; and its document is
    // one of the first `topDocuments` of the ranking (a lower one that shares more of the question's
    // words is not what retrieval found best).
    const supported = this.eligible(cands, knowledge);
    if (!supported.length) return [];
    supported.sort((a, b) => b.score - a.score || a.passage - b.passage || a.index - b.index);
    const best = supported[0]!;
    // The floor is the hand-weighted score's (a learned score is relative to the best candidate).
    if (Math.max(...supported.map((c) => c.hand)) < o.minScore) return [];

    // Up to two more, close to the best and from the same document: nothing from unrelated ones. A
    // sentence that refers back ("It is …") brings the one before it (same paragraph), within the limit.
    const doc = knowledge[best.passage]!.title;
    const picked: Candidate[] = [];
    // "Second, …" leans on its enumeration's "First, …" a few sentences before (the paragraph before, often).
    const enumerationStart = (c: Candidate): Candidate | undefined => {
      if (c.sentence.kind !== 'prose' || !/^second(?:ly)?\b/i.test(c.text)) return undefined;
      for (let i = c.index - 1; i >= c.index - 5; i--) {
        const x = byKey.get(`${c.passage}:${i}`);
        if (x && /^first(?:ly)?\b/i.test(x.text)) return x;
      }
      return undefined;
    };
    const take = (c: Candidate, first: boolean): void => {
      const enumerated = enumerationStart(c);
      const before = enumerated ?? byKey.get(`${c.passage}:${c.index - 1}`);
      // A table row that is only a caption ("(Address of principal executive offices)") labels the row above it.
      const caption = (c.sentence.kind === 'row' || c.sentence.kind === 'record') && CAPTION.test(c.text);
      const needs = !!before && !picked.includes(before) &&
        (caption || !!enumerated || (c.sentence.kind === 'prose' && ANAPHOR.test(c.text) && before.sentence.unit === c.sentence.unit));
      // A sentence that introduces what follows ("… computes:", "… as follows") brings the line after it (a formula, an item).
      const after = byKey.get(`${c.passage}:${c.index + 1}`);
      const opens = !needs && !!after && !picked.includes(after) && after.sentence.kind !== 'prose' && INTRODUCES.test(c.text);
      const room = o.maxSentences - picked.length;
      if (needs && room >= 2) {
        before!.score = Math.max(before!.score, c.score); // kept as long as the sentence that needs it
        picked.push(c, before!);
      } else if (opens && room >= 2) {
        after!.score = c.score - 1e-9; // right after it
        picked.push(c, after!);
      } else if (first || !needs) picked.push(c);
    };
    take(best, true);
    for (const c of supported.slice(1)) {
      if (picked.length >= o.maxSentences || c.score < best.score * o.relativeScore) break;
      if (picked.includes(c) || knowledge[c.passage]!.title !== doc || picked.some((p) => nearDuplicate(p.terms, c.terms))) continue;
      take(c, false);
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

/**
 * How well a sentence fits the kind of answer asked for: ×1.25 when it does; when a date, time,
 * duration or number is asked, a sentence without one can hardly answer (×MISSING).
 */
function cue(kind: AnswerKind, text: string): number {
  switch (kind) {
    case 'date': return DATE.test(text) ? 1.25 : MISSING;
    case 'time': return TIME.test(text) ? 1.25 : MISSING;
    case 'duration': return DURATION.test(text) ? 1.25 : NUMBER.test(text) ? 1 : MISSING;
    case 'number': return NUMBER.test(text) ? 1.25 : MISSING;
    case 'person': return NAME.test(text) ? 1.15 : 1;
    case 'place': return PLACE.test(text) ? 1.15 : 1;
    default: return 1;
  }
}

/** The decline decision's figures, of the best sentence quoted. */
export interface Support {
  /** Its score. */
  score: number;
  cosine: number;
  cover: number;
  passageCover: number;
  /** One of the sentences quoted holds the kind of answer asked for. */
  typed: boolean;
  /** Its passage's retrieval sides, when the caller gave them. */
  termSimilarity?: number;
  vectorSimilarity?: number;
  /** The best vector side among the passages. */
  topVector?: number;
}

function support(picked: Candidate[], knowledge: KnowledgeItem[]): Support {
  const best = picked[0]!;
  const k = knowledge[best.passage]!;
  const vs = knowledge.map((x) => x.vector_similarity).filter((x): x is number => typeof x === 'number');
  return {
    score: best.score, cosine: best.cosine, cover: best.cover, passageCover: best.passageCover,
    typed: picked.some((c) => c.typed),
    termSimilarity: k.term_similarity, vectorSimilarity: k.vector_similarity, topVector: vs.length ? Math.max(...vs) : undefined,
  };
}

/** Whether a sentence holds the kind of answer asked for (any sentence does when none is asked). */
function holdsKind(kind: AnswerKind, text: string): boolean {
  switch (kind) {
    case 'date': return DATE.test(text);
    case 'time': return TIME.test(text);
    case 'duration': return DURATION.test(text) || NUMBER.test(text);
    case 'number': return NUMBER.test(text);
    case 'person': return NAME.test(text);
    case 'place': return PLACE.test(text);
    default: return true;
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
function isTitle(s: PassageSentence, followed: boolean): boolean {
  if (!followed || s.kind === 'record' || s.kind === 'row') return false;
  // A formula or an assignment ("similarity = w · v + …") is content, however short.
  if (/\s[=≈≠≤≥<>]=?\s/.test(s.text)) return false;
  const words = s.text.split(/\s+/).length;
  if (words > 12 || /[.!?。！？:;]["'”’)\]]*$/.test(s.text)) return false;
  if (/^[^:：]{1,60}[:：]\s*\S/.test(s.text)) return false; // "Key: value" is content
  if (/\p{Ll}.*,\s/u.test(s.text) && words >= 6) return false; // a clause with a comma is a sentence that runs on
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

/**
 * The answer's pieces: each sentence followed by the `[ID:n]` of its passage, the best first. A
 * sentence brought in as context for another (it scores as high) comes right before it; a
 * sentence that continues the one before it in the same paragraph follows on the same line.
 */
function format(picked: Candidate[], knowledge: KnowledgeItem[], cite: boolean): string[] {
  const ordered = [...picked].sort((a, b) => b.score - a.score || a.passage - b.passage || a.index - b.index);
  return ordered.map((c, i) => {
    const prev = ordered[i - 1];
    const sep = !prev ? '' : prev.passage === c.passage && prev.index + 1 === c.index && prev.sentence.unit === c.sentence.unit ? ' ' : '\n';
    return sep + c.text.trim() + (cite ? ` [ID:${knowledge[c.passage]!.id}]` : '');
  });
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
