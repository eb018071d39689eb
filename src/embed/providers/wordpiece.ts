/**
 * A WordPiece tokenizer for `tokenizer.json` files (Hugging Face tokenizers format), in plain
 * TypeScript. It reproduces the token ids that transformers.js (`@huggingface/tokenizers`
 * 0.2) gives for the subset it implements:
 *
 * - added tokens: split out of the raw text first (and out of the normalised text, for added
 *   tokens with `normalized: true`), honouring `lstrip` / `rstrip`;
 * - normalizer: `null`, or one of / a `Sequence` of `NFC`, `NFD`, `NFKC`, `NFKD`,
 *   `StripAccents` (removes every `\p{M}`, as transformers.js does) and `Lowercase`;
 * - pre-tokenizer: `BertPreTokenizer` (runs of non-space non-punctuation, or one punctuation
 *   character; punctuation = `\p{P}` plus every ASCII symbol);
 * - model: `WordPiece` (greedy longest match first, `##`-style continuation, a word longer
 *   than `max_input_chars_per_word` code points or with an unmatched piece → one unknown token);
 * - no post-processor; truncation to `model_max_length` of `tokenizer_config.json`.
 *
 * Anything else (BertNormalizer, other pre-tokenizers, BPE / Unigram, special-token
 * templates …) is refused with an Error rather than tokenised differently.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** transformers.js' `PUNCTUATION_REGEX`: Unicode punctuation plus all ASCII symbols. */
const PUNCTUATION = '\\p{P}\\u0021-\\u002F\\u003A-\\u0040\\u005B-\\u0060\\u007B-\\u007E';
/** BertPreTokenizer: a run of characters that are neither white space nor punctuation, or one punctuation character. */
// A run is matched in pieces of at most RUN_PIECE characters and the touching pieces joined: one
// unbounded `+` over a run of some millions of characters overflows V8's regexp stack ('u' mode).
const RUN_PIECE = 4096;
const BERT_PRE_TOKENIZER = new RegExp(`[^\\s${PUNCTUATION}]{1,${RUN_PIECE}}|[${PUNCTUATION}]`, 'gu');
const RUN_MORE = new RegExp(`[^\\s${PUNCTUATION}]{1,${RUN_PIECE}}`, 'uy');
const NON_ASCII = /[^\x00-\x7f]/;
const MARKS = /\p{M}/gu;

interface AddedTokenJson {
  id: number;
  content: string;
  single_word?: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  normalized?: boolean;
  special?: boolean;
}
interface NormalizerJson {
  type: string;
  normalizers?: NormalizerJson[];
}
interface TokenizerJson {
  normalizer?: NormalizerJson | null;
  pre_tokenizer?: { type: string } | null;
  post_processor?: unknown;
  added_tokens?: AddedTokenJson[];
  model?: {
    type?: string;
    vocab?: Record<string, number>;
    unk_token?: string;
    continuing_subword_prefix?: string;
    max_input_chars_per_word?: number;
    fuse_unk?: boolean;
  };
}
/** The parts of `tokenizer_config.json` that change token ids. */
export interface TokenizerConfigJson {
  model_max_length?: number;
}

interface AddedToken {
  id: number;
  content: string;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
}

/** transformers.js' DictionarySplitter: cuts the longest dictionary word found at each position out of a text. */
class Splitter {
  private readonly trie: Map<string, unknown> & { end?: string } = new Map();
  readonly empty: boolean;

  constructor(words: string[]) {
    this.empty = words.length === 0;
    for (const w of words) {
      let node = this.trie as Map<string, unknown> & { end?: string };
      for (let i = 0; i < w.length; i++) {
        let next = node.get(w[i]!) as (Map<string, unknown> & { end?: string }) | undefined;
        if (!next) node.set(w[i]!, (next = new Map()));
        node = next;
      }
      node.end = w;
    }
  }

  split(text: string): string[] {
    if (this.empty) return [text];
    const out: string[] = [];
    let start = 0;
    let i = 0;
    while (i < text.length) {
      let node: (Map<string, unknown> & { end?: string }) | undefined = this.trie;
      let match: string | undefined;
      for (let j = i; j < text.length && (node = node.get(text[j]!) as typeof node); j++) if (node!.end !== undefined) match = node!.end;
      if (match !== undefined) {
        if (i > start) out.push(text.slice(start, i));
        out.push(match);
        i += match.length;
        start = i;
      } else i++;
    }
    if (start < text.length) out.push(text.slice(start));
    return out;
  }
}

type Step = (s: string) => string;
const STEPS: Record<string, { step: Step; asciiIdentity: boolean }> = {
  NFC: { step: (s) => s.normalize('NFC'), asciiIdentity: true },
  NFD: { step: (s) => s.normalize('NFD'), asciiIdentity: true },
  NFKC: { step: (s) => s.normalize('NFKC'), asciiIdentity: true },
  NFKD: { step: (s) => s.normalize('NFKD'), asciiIdentity: true },
  StripAccents: { step: (s) => s.replace(MARKS, ''), asciiIdentity: true },
  Lowercase: { step: (s) => s.toLowerCase(), asciiIdentity: false },
};

function normalizerSteps(n: NormalizerJson | null | undefined, where: string): (typeof STEPS)[string][] {
  if (n === null || n === undefined) return [];
  if (n.type === 'Sequence') return (n.normalizers ?? []).flatMap((x) => normalizerSteps(x, where));
  const s = STEPS[n.type];
  if (!s) throw new Error(`${where}: normalizer "${n.type}" is not supported (supported: Sequence of ${Object.keys(STEPS).join(', ')})`);
  return [s];
}

/** Words memoised per tokenizer (natural text repeats its words); cleared when full. */
const MEMO_LIMIT = 100_000;
const MEMO_MAX_WORD = 64;

export class WordPieceTokenizer {
  /** Largest token id this tokenizer can produce. */
  readonly maxId: number;
  /** Truncation length (tokens). */
  readonly maxLength: number;
  readonly unkId: number;
  private readonly ids: Map<string, number>;
  private readonly prefix: string;
  private readonly maxChars: number;
  private readonly steps: Step[];
  /** True when every normalisation step leaves ASCII text as it is, except lower-casing. */
  private readonly asciiLowerOnly: boolean;
  private readonly lowercase: boolean;
  private readonly added = new Map<string, AddedToken>();
  private readonly rawSplitter: Splitter;
  private readonly normSplitter: Splitter;
  private readonly memo = new Map<string, number | Int32Array>();

  /**
   * @param json The parsed `tokenizer.json`.
   * @param config The parsed `tokenizer_config.json` (for `model_max_length`).
   * @param where A name for messages (e.g. the file path).
   */
  constructor(json: TokenizerJson, config: TokenizerConfigJson = {}, where = 'tokenizer.json') {
    if (!json || typeof json !== 'object') throw new Error(`${where}: not a tokenizer.json object`);
    const m = json.model;
    if (!m || m.type !== 'WordPiece') throw new Error(`${where}: tokenizer model "${m?.type ?? 'none'}" is not supported (only WordPiece)`);
    if (!json.pre_tokenizer || json.pre_tokenizer.type !== 'BertPreTokenizer') {
      throw new Error(`${where}: pre-tokenizer "${json.pre_tokenizer?.type ?? 'none'}" is not supported (only BertPreTokenizer)`);
    }
    if (json.post_processor !== null && json.post_processor !== undefined) {
      throw new Error(`${where}: post-processor "${(json.post_processor as { type?: string }).type ?? '?'}" is not supported (only none)`);
    }
    if (m.fuse_unk) throw new Error(`${where}: WordPiece "fuse_unk" is not supported`);
    if (!m.vocab || typeof m.vocab !== 'object') throw new Error(`${where}: WordPiece model has no vocab`);
    const steps = normalizerSteps(json.normalizer, where);
    this.steps = steps.map((s) => s.step);
    this.asciiLowerOnly = steps.every((s) => s.asciiIdentity || s.step === STEPS.Lowercase!.step);
    this.lowercase = steps.some((s) => s.step === STEPS.Lowercase!.step);
    this.prefix = m.continuing_subword_prefix ?? '##';
    this.maxChars = m.max_input_chars_per_word ?? 100;

    // The model's token → id map, with added tokens put in (as transformers.js does); an id
    // comes from the added token of that text first, then from the vocabulary.
    const vocab = new Map<string, number>(Object.entries(m.vocab));
    const unnormalized: string[] = [];
    const normalized: string[] = [];
    for (const t of json.added_tokens ?? []) {
      const special = t.special ?? false;
      const tok: AddedToken = { id: t.id, content: t.content, lstrip: t.lstrip ?? false, rstrip: t.rstrip ?? false, normalized: t.normalized ?? !special };
      vocab.set(tok.content, tok.id);
      this.added.set(tok.content, tok);
      if (tok.normalized && this.steps.length) {
        const n = this.normalize(tok.content);
        normalized.push(n);
        this.added.set(n, tok);
      } else unnormalized.push(tok.content);
    }
    this.rawSplitter = new Splitter(unnormalized);
    this.normSplitter = new Splitter(normalized);
    this.ids = new Map();
    let maxId = -1;
    for (const [token, id] of vocab) {
      const final = this.added.get(token)?.id ?? id;
      if (!Number.isInteger(final) || final < 0) throw new Error(`${where}: token ${JSON.stringify(token)} has an invalid id ${String(final)}`);
      this.ids.set(token, final);
      if (final > maxId) maxId = final;
    }
    const unk = m.unk_token === undefined ? undefined : this.ids.get(m.unk_token);
    if (unk === undefined) throw new Error(`${where}: the unknown token ${JSON.stringify(m.unk_token)} is not in the vocabulary`);
    this.unkId = unk;
    this.maxId = maxId;
    const max = config.model_max_length;
    this.maxLength = typeof max === 'number' && max > 0 ? max : Infinity;
  }

  /** Loads `tokenizer.json` and `tokenizer_config.json` (optional) from a model folder. */
  static async load(dir: string): Promise<WordPieceTokenizer> {
    const file = join(dir, 'tokenizer.json');
    const json = JSON.parse(await readFile(file, 'utf8')) as TokenizerJson;
    const config = (await readFile(join(dir, 'tokenizer_config.json'), 'utf8').then(
      (s) => JSON.parse(s) as TokenizerConfigJson,
      (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') return {};
        throw e;
      },
    )) as TokenizerConfigJson;
    return new WordPieceTokenizer(json, config, file);
  }

  private normalize(text: string): string {
    if (this.asciiLowerOnly && !NON_ASCII.test(text)) return this.lowercase ? text.toLowerCase() : text;
    for (const s of this.steps) text = s(text);
    return text;
  }

  /** Token ids of `text`, truncated to `maxLength` (no special tokens: this format has no post-processor). */
  encode(text: string): number[] {
    const out: number[] = [];
    const sections = this.splitAdded(this.rawSplitter, text);
    for (const section of sections) {
      if (section.length === 0) continue;
      const a = this.added.get(section);
      if (a) {
        out.push(a.id);
        continue;
      }
      const norm = this.normalize(section);
      if (norm.length === 0) continue;
      for (const sub of this.splitAdded(this.normSplitter, norm)) {
        if (sub.length === 0) continue;
        const b = this.added.get(sub);
        if (b) out.push(b.id);
        else this.words(sub, out);
      }
      if (out.length >= this.maxLength) break;
    }
    if (out.length > this.maxLength) out.length = this.maxLength;
    return out;
  }

  /** Splits out added tokens, trimming white space beside those with lstrip / rstrip. */
  private splitAdded(splitter: Splitter, text: string): string[] {
    const parts = splitter.split(text);
    if (parts.length === 1) return parts;
    for (let i = 0; i < parts.length; i++) {
      const a = this.added.get(parts[i]!);
      if (!a) continue;
      if (a.lstrip && i > 0) parts[i - 1] = parts[i - 1]!.trimEnd();
      if (a.rstrip && i < parts.length - 1) parts[i + 1] = parts[i + 1]!.trimStart();
    }
    return parts;
  }

  /** Pre-tokenises a normalised section and appends the WordPiece ids of each word. */
  private words(text: string, out: number[]): void {
    BERT_PRE_TOKENIZER.lastIndex = 0;
    let m: RegExpExecArray | null;
    while (out.length < this.maxLength && (m = BERT_PRE_TOKENIZER.exec(text)) !== null) {
      let word = m[0];
      if (word.length >= RUN_PIECE) {
        // The run may go on past this piece: join the pieces that touch.
        const parts = [word];
        for (;;) {
          RUN_MORE.lastIndex = BERT_PRE_TOKENIZER.lastIndex;
          const c = RUN_MORE.exec(text);
          if (!c) break;
          parts.push(c[0]);
          BERT_PRE_TOKENIZER.lastIndex = RUN_MORE.lastIndex;
        }
        word = parts.join('');
      }
      const hit = this.memo.get(word);
      if (hit !== undefined) {
        if (typeof hit === 'number') out.push(hit);
        else for (let i = 0; i < hit.length; i++) out.push(hit[i]!);
        continue;
      }
      const ids = this.wordPiece(word);
      if (word.length <= MEMO_MAX_WORD) {
        if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
        this.memo.set(word, ids.length === 1 ? ids[0]! : Int32Array.from(ids));
      }
      for (const id of ids) out.push(id);
    }
  }

  /** Greedy longest-match-first WordPiece over code points; any unmatched piece makes the word one unknown token. */
  private wordPiece(word: string): number[] {
    // More UTF-16 units than twice the limit: more code points than the limit (skips a huge array below).
    if (word.length > 2 * this.maxChars) return [this.unkId];
    // Code point boundaries (UTF-16 offsets), as transformers.js works on `[...word]`.
    const b: number[] = [0];
    for (let i = 0; i < word.length; ) {
      const c = word.charCodeAt(i);
      i += c >= 0xd800 && c <= 0xdbff && i + 1 < word.length && (word.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
      b.push(i);
    }
    const n = b.length - 1;
    if (n > this.maxChars) return [this.unkId];
    const whole = this.ids.get(word);
    if (whole !== undefined) return [whole];
    const pieces: number[] = [];
    let start = 0;
    while (start < n) {
      let end = n;
      let id: number | undefined;
      for (; start < end; end--) {
        const sub = word.slice(b[start], b[end]);
        id = this.ids.get(start > 0 ? this.prefix + sub : sub);
        if (id !== undefined) break;
      }
      if (id === undefined) return [this.unkId];
      pieces.push(id);
      start = end;
    }
    return pieces;
  }
}
