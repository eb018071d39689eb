/**
 * Citation markers in answers. Every `[ID:n]` must name a passage that was sent to the model;
 * any other is removed before the answer reaches the caller (RAGFlow keeps whatever the model
 * wrote). Streams are filtered as they arrive: a marker split across deltas is held back only
 * until it can be judged.
 */

/** What a stream may still turn into a marker: held back until it can be judged. */
const PARTIAL = /^\[\s*(?:I|ID\s*(?::\s*(?:\d+(?:\s*,\s*(?:I|ID\s*(?::\s*)?)?\d*)*\s*)?)?)?$/i;

export interface CitationResult {
  text: string;
  /** Ids cited (valid ones), in order of first appearance. */
  cited: number[];
  /** Markers (ids) removed because they named no passage sent. */
  removed: number;
}

/** Rewrites one marker: valid ids as `[ID:n]` each, invalid ids dropped and counted. */
function judge(marker: string, valid: (id: number) => boolean, cited: number[]): { text: string; removed: number } {
  const ids = (marker.match(/\d+/g) ?? []).map(Number);
  let removed = 0;
  let text = '';
  for (const id of ids) {
    if (valid(id)) {
      text += `[ID:${id}]`;
      if (!cited.includes(id)) cited.push(id);
    } else removed++;
  }
  return { text, removed };
}

/** Checks every marker of a whole answer against the `count` passages sent (ids 0..count-1). */
export function verifyCitations(answer: string, count: number): CitationResult {
  const f = new CitationFilter(count);
  const text = f.push(answer) + f.end();
  return { text, cited: f.cited, removed: f.removed };
}

/** `[ID:3]`, `[ID: 3]`, `[id:3, ID:4]`, `[ID:3,4]` — one marker, one or more ids. */
const MARKER_AT = /^\[\s*ID\s*:\s*\d+(?:\s*,\s*(?:ID\s*:\s*)?\d+)*\s*\]/i;
/** What may follow a removed marker without the space before it: punctuation or a line end. */
const CLOSES = /^[.,;:!?。！？，、)\]\n]/;

/**
 * The streaming form: `push` returns the text that is safe to emit now; `end` flushes the rest.
 * Spaces and tabs are held back until the next visible character, so that a removed marker takes
 * the space before it along ("see [ID:9] and" → "see and", "fact [ID:9]." → "fact."): a stream
 * and the whole answer come out byte for byte the same.
 */
export class CitationFilter {
  /** A possible marker prefix, not judged yet. */
  private held = '';
  /** Spaces seen and not yet emitted. */
  private space = '';
  /** The spaces before a removed marker (null: no marker was just removed). */
  private before: string | null = null;
  readonly cited: number[] = [];
  removed = 0;
  constructor(private readonly count: number) {}

  private visible(text: string): string {
    let pre = this.space;
    if (this.before !== null) {
      if (CLOSES.test(text)) pre = '';
      else if (!pre) pre = this.before;
      this.before = null;
    }
    this.space = '';
    return pre + text;
  }

  push(delta: string): string {
    let s = this.held + delta;
    this.held = '';
    let out = '';
    while (s) {
      const c = s[0]!;
      if (c === ' ' || c === '\t') {
        this.space += c;
        s = s.slice(1);
        continue;
      }
      if (c !== '[') {
        const i = s.search(/[ \t[]/);
        const run = i < 0 ? s : s.slice(0, i);
        out += this.visible(run);
        s = s.slice(run.length);
        continue;
      }
      const m = MARKER_AT.exec(s);
      if (m) {
        const r = judge(m[0], (id) => id >= 0 && id < this.count, this.cited);
        this.removed += r.removed;
        if (r.text) out += this.visible(r.text);
        else {
          if (this.before === null) this.before = this.space;
          this.space = '';
        }
        s = s.slice(m[0].length);
        continue;
      }
      if (PARTIAL.test(s) && s.length < 64) {
        this.held = s;
        break;
      }
      out += this.visible('[');
      s = s.slice(1);
    }
    return out;
  }

  end(): string {
    let out = '';
    while (this.held) {
      const h = this.held;
      this.held = '';
      // An unfinished marker at the very end is plain text.
      out += this.visible(h[0]!) + this.push(h.slice(1));
    }
    out += this.space;
    this.space = '';
    this.before = null;
    return out;
  }
}

/** Splits an answer into sentences for citation insertion (keeps the separators). */
export function splitSentences(text: string): string[] {
  return text.match(/[^.!?。！？\n]+[.!?。！？\n]*|[.!?。！？\n]+/g) ?? [];
}
