/**
 * `qa`: one chunk per question/answer pair (RAGFlow `rag/app/qa.py`). Pairs come from two-column
 * spreadsheets (no header), CSV, TAB- or comma-separated text lines, heading/body structure
 * (Markdown, Word, HTML) or numbered questions in a PDF. The chunk reads
 * `Question: q\tAnswer: a` (`问题：q\t回答：a` for Chinese); only the question is indexed and
 * embedded.
 */
import type { Block, ChunkContext, ChunkDraft, ChunkResult, ParsedDocument } from '../types.js';
import { filled, finalize, isRunning, splitTwoFieldLines, tableChunks } from './common.js';
import { isChineseText } from './config.js';

type Pair = [q: string, a: string];

const PREFIX = /^(问题|答案|回答|user|assistant|Question|Answer|问|答)[\t:： ]+/i;
// RAGFlow also strips a bare "Q " / "A " (letter + space), which eats the article of answers like
// "A piece of…"; ragloom strips the single letters only before ":", "：" or TAB.
const LETTER_PREFIX = /^[QA][\t:：][\t:： ]*/i;
/** RAGFlow `rmPrefix`: trims and drops a leading "Q:", "Answer:", "问题："… */
const rmPrefix = (t: string) => t.trim().replace(PREFIX, '').replace(LETTER_PREFIX, '');

function pairDraft(q: string, a: string, language: string | undefined): ChunkDraft {
  const english = language ? language.trim().toLowerCase() !== 'chinese' : !isChineseText(q + a);
  const [qp, ap] = english ? ['Question: ', 'Answer: '] : ['问题：', '回答：'];
  const question = q.trim();
  return { content: `${qp}${rmPrefix(q)}\t${ap}${rmPrefix(a)}`, indexText: question, embedText: question };
}

/** Spreadsheet rows: the first two non-empty cells are question and answer; other rows fail. */
function sheetPairs(tables: Block[]): { pairs: Pair[]; fails: number } {
  const pairs: Pair[] = [];
  let fails = 0;
  for (const t of tables) {
    for (const r of t.rows ?? []) {
      const cells = r.filter(filled);
      if (cells.length >= 2) pairs.push([cells[0]!, cells[1]!]);
      else fails++;
    }
  }
  return { pairs, fails };
}

/**
 * RAGFlow's csv/txt loop: a two-field row starts a pair (the previous one is kept only if it has
 * an answer, the last one always); other rows continue the current answer.
 */
function linePairs(rows: { fields: string[]; raw: string }[]): { pairs: Pair[]; fails: number } {
  const pairs: Pair[] = [];
  let fails = 0;
  let q = '';
  let a = '';
  for (const { fields, raw } of rows) {
    if (fields.length !== 2) {
      if (q) a += `\n${raw}`;
      else fails++;
      continue;
    }
    if (q && a) pairs.push([q, a]);
    [q, a] = fields as Pair;
  }
  if (q) pairs.push([q, a]);
  return { pairs, fails };
}

/** Text lines split on TAB, or on commas when more lines split into two that way. */
function textPairs(text: string): { pairs: Pair[]; fails: number } {
  return linePairs(splitTwoFieldLines(text.split('\n')));
}

/** Heading stack: the headings above a body form the question, the body the answer. */
function headingPairs(blocks: Block[]): Pair[] {
  const pairs: Pair[] = [];
  const stack: { level: number; text: string }[] = [];
  let answer = '';
  const flush = () => {
    if (answer.trim() && stack.length) pairs.push([stack.map((s) => s.text).join('\n'), answer]);
    answer = '';
  };
  for (const b of blocks) {
    if (isRunning(b) || b.kind === 'table' || b.kind === 'image') continue;
    const level = b.kind === 'heading' || b.kind === 'title' ? (b.level ?? 1) : 0;
    if (!level || level > 6) {
      answer += `\n${b.text}`;
      continue;
    }
    flush();
    while (stack.length && level <= stack[stack.length - 1]!.level) stack.pop();
    stack.push({ level, text: b.text });
  }
  flush();
  return pairs;
}

const QUESTION_SRC = [
  '第([零一二三四五六七八九十百0-9]+)问',
  '第([零一二三四五六七八九十百0-9]+)条',
  '[\\(（]([零一二三四五六七八九十百]+)[\\)）]',
  '第([0-9]+)问',
  '第([0-9]+)条',
  '([0-9]{1,2})[\\. 、]',
  '([零一二三四五六七八九十百]+)[ 、]',
  '[\\(（]([0-9]{1,2})[\\)）]',
  'QUESTION (ONE|TWO|THREE|FOUR|FIVE|SIX|SEVEN|EIGHT|NINE|TEN)',
  'QUESTION (I+V?|VI*|XI|IX|X)',
  'QUESTION ([0-9]+)',
];
const QUESTION_PATTERN = QUESTION_SRC.map((s) => new RegExp(`^(?:${s})`));
const NOT_Q = ['0', '[0-9]+ +[0-9~个只-]', '[0-9]+\\.{2,}', '[0-9]+(\\.[0-9]+){2,}[的中]'].map((s) => new RegExp(`^(?:${s})`));

/**
 * Numbered questions in PDF text (RAGFlow `qbullets_category`): the most used question pattern
 * marks questions; a question runs to its "?" or line end, the answer to the next question.
 * RAGFlow also checks indentation and layout; ragloom reads the numbering only.
 */
function numberedPairs(blocks: Block[]): Pair[] | undefined {
  const texts = blocks.filter((b) => !isRunning(b) && b.kind !== 'table' && b.kind !== 'image' && b.text.trim()).map((b) => b.text.trim());
  let best = -1;
  let max = 0;
  QUESTION_PATTERN.forEach((p, i) => {
    const hit = texts.some((t) => p.test(t) && !NOT_Q.some((n) => n.test(t))) ? 1 : 0;
    if (hit > max) {
      max = hit;
      best = i;
    }
  });
  if (best < 0) return undefined;
  const q = new RegExp(`^(?:${QUESTION_SRC[best]!})[\\s\\S]*?(?:？|\\?|\\n|$)`);
  const pairs: Pair[] = [];
  let cur: Pair | undefined;
  for (const t of texts) {
    const m = q.exec(t);
    if (m) {
      if (cur) pairs.push(cur);
      cur = [m[0], t.slice(m[0].length)];
    } else if (cur) cur[1] += t;
  }
  if (cur) pairs.push(cur);
  return pairs;
}

export function qa(doc: ParsedDocument, ctx: ChunkContext): ChunkResult {
  const notes: string[] = [];
  const tables = doc.blocks.filter((b) => b.kind === 'table');
  const drafts: ChunkDraft[] = [];
  let pairs: Pair[] = [];
  let fails = 0;
  if (doc.format === 'xlsx') ({ pairs, fails } = sheetPairs(tables));
  else if (doc.format === 'csv') {
    ({ pairs, fails } = linePairs(tables.flatMap((t) => (t.rows ?? []).map((r) => ({ fields: r, raw: r.join(',') })))));
  } else if (doc.format === 'pdf') {
    const found = numberedPairs(doc.blocks);
    if (!found) notes.push('qa: unable to recognize Q&A structure');
    pairs = found ?? [];
  } else if (doc.blocks.some((b) => b.kind === 'heading')) {
    pairs = headingPairs(doc.blocks);
    // Word Q&A keeps the document's tables as table chunks, as RAGFlow's docx path does.
    if (doc.format === 'docx') for (const t of tables) drafts.push(...tableChunks(t, ctx.language));
  } else {
    const text = doc.blocks.filter((b) => !isRunning(b) && b.kind !== 'table').map((b) => b.text).join('\n');
    ({ pairs, fails } = textPairs(text));
    if (!pairs.length && tables.length) ({ pairs, fails } = sheetPairs(tables));
  }
  if (fails) notes.push(`qa: ${fails} line(s) without a question/answer pair were skipped`);
  drafts.unshift(...pairs.filter(([q]) => q.trim()).map(([q, a]) => pairDraft(q, a, ctx.language)));
  return finalize(drafts, doc, notes);
}
