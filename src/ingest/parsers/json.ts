/**
 * JSON and JSON Lines. A block per top-level item (array element or object key), pretty-printed,
 * so chunkers can keep each record whole; RAGFlow splits by key paths in a similar spirit.
 */
import type { Block, ParsedDocument } from '../types.js';
import { fail, shortMessage } from './common.js';
import type { Ctx } from './common.js';
import { decodeText } from './decode.js';

const pretty = (v: unknown): string => JSON.stringify(v, null, 2);

export async function parseJson(data: Uint8Array, _ctx: Ctx, lines = false): Promise<ParsedDocument> {
  const { text } = decodeText(data);
  if (text.trim() === '') fail('File is empty');
  const blocks: Block[] = [];
  if (lines) {
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
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
