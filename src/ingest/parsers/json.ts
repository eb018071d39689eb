/**
 * JSON and JSON Lines. A block per top-level item (array element or object key), pretty-printed,
 * so chunkers can keep each record whole; RAGFlow splits by key paths in a similar spirit.
 */
import type { Block, ParsedDocument } from '../types.js';
import { fail, shortMessage } from './common.js';
import type { Ctx } from './common.js';
import { decodeText } from './decode.js';

const pretty = (v: unknown): string => JSON.stringify(v, null, 2);

/** Fails when arrays / objects nest deeper than `limit` (strings skipped); one linear pass. */
function checkDepth(text: string, limit: number, where = ''): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) fail(`JSON${where} nests deeper than ${limit} levels (the nesting depth limit); refusing to parse it`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

export async function parseJson(data: Uint8Array, ctx: Ctx, lines = false): Promise<ParsedDocument> {
  const { text } = decodeText(data);
  if (text.trim() === '') fail('File is empty');
  const limit = ctx.opts.maxNestingDepth;
  const blocks: Block[] = [];
  if (lines) {
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      checkDepth(line, limit, ` on line ${i + 1}`);
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch (e) {
        fail(`Invalid JSON on line ${i + 1}: ${shortMessage(e)}`, e);
      }
      blocks.push({ kind: 'text', text: pretty(v) });
    });
    return { format: 'json', blocks };
  }
  checkDepth(text, limit);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    fail(`Invalid JSON: ${shortMessage(e)}`, e);
  }
  if (Array.isArray(v)) {
    for (const item of v) blocks.push({ kind: 'text', text: pretty(item) });
  } else if (v !== null && typeof v === 'object') {
    for (const [k, item] of Object.entries(v)) blocks.push({ kind: 'text', text: pretty({ [k]: item }) });
  } else {
    blocks.push({ kind: 'text', text: pretty(v) });
  }
  return { format: 'json', blocks };
}
