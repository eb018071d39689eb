/**
 * Message: what the user reads. One of its `content` templates (picked at random, as RAGFlow
 * does), with references replaced; an upstream LLM / Agent answer still streaming is streamed
 * through. With `memory_ids`, the turn (question and this answer) is saved to those memories.
 */
import type { ComponentImpl, Node } from '../node.js';
import type { Canvas } from '../canvas.js';
import { asText, lazyText } from '../canvas.js';
import { EXACT_REF } from '../catalog.js';
import { isLazy } from '../types.js';

function templates(n: Node): string[] {
  const c = n.params.content;
  if (typeof c === 'string') return [c];
  if (Array.isArray(c)) return c.map((x) => asText(x));
  return [];
}

/** A value as message text: lists joined by the delimiter, data as JSON. */
function messageText(v: unknown, delimiter?: string): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v) && delimiter) return v.map((x) => asText(x)).join(delimiter);
  return asText(v);
}

/** The template's literal pieces and references, in order, streaming lazy values through. */
async function* renderStream(n: Node, c: Canvas, template: string): AsyncGenerator<string> {
  const els = c.inputElementsFromText(n, template);
  const re = new RegExp(EXACT_REF.source, 'g');
  let last = 0;
  for (const m of template.matchAll(re)) {
    if (m.index! > last) yield template.slice(last, m.index);
    last = m.index! + m[0].length;
    const el = els[m[1]!];
    const v = el?.value;
    if (isLazy(v)) {
      let all = '';
      for await (const piece of v.stream()) {
        all += piece;
        yield piece;
      }
      n.setInput(m[1]!, all.replace(/<\/?think>/g, ''));
    } else {
      const text = messageText(v, n.param<string>('delimiter'));
      n.setInput(m[1]!, text);
      yield text;
    }
  }
  if (last < template.length) yield template.slice(last);
}

async function saveToMemory(n: Node, c: Canvas, content: string): Promise<void> {
  const ids = n.param<unknown[]>('memory_ids');
  if (!Array.isArray(ids) || !ids.length || !c.deps.saveToMemory) return;
  await c.deps.saveToMemory(ids.map(String), asText(c.globals['sys.query']), content);
}

export const MESSAGE: ComponentImpl & { afterStream(n: Node, c: Canvas, text: string): Promise<void> } = {
  inputElements(n, c) {
    return c.inputElementsFromText(n, templates(n).join(''));
  },
  async invoke(n, c) {
    const list = templates(n);
    if (!list.length) throw new Error('[Message] Content does not support empty value.');
    const template = list[Math.floor(Math.random() * list.length)]!;
    if (n.param('stream') !== false) {
      // Streamed by the run loop, which then stores the text and calls afterStream.
      n.setOutput('content', lazyText(() => renderStream(n, c, template)));
      return;
    }
    let text = '';
    for await (const piece of renderStream(n, c, template)) text += piece;
    n.setOutput('content', text);
    n.setOutput('downloads', []);
    await saveToMemory(n, c, text);
  },
  async afterStream(n, c, text) {
    n.setOutput('downloads', []);
    await saveToMemory(n, c, text);
  },
};
