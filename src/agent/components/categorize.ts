/**
 * Categorize: picks the downstream branch whose category fits the query (RAGFlow
 * `categorize.py`). With a generative model it asks the model and takes the category whose name
 * the answer mentions most (`categoryInAnswer`; else the last category). With the built-in
 * extractive model it is an embedding classifier: the category whose description or examples lie
 * nearest the query (cosine of the tenant's default embedding model) — deterministic, offline.
 */
import type { ChatMessage } from '../../llm/index.js';
import type { ComponentImpl, Node } from '../node.js';
import type { Canvas } from '../canvas.js';
import { asText, materialize } from '../canvas.js';
import { isExtractive, genConf } from './llm.js';
import { cosine } from '../../embed/similarity.js';
import { isPlainObject } from '../../util/index.js';

interface Category {
  name: string;
  description: string;
  examples: string[];
  to: string[];
}

export function categories(n: Node): Category[] {
  const cd = n.params.category_description;
  if (!isPlainObject(cd) || !Object.keys(cd).length) throw new Error('[Categorize] Category examples does not support empty value.');
  return Object.entries(cd).map(([name, v]) => {
    if (!name) throw new Error('[Categorize] Category name can not be empty!');
    const d = isPlainObject(v) ? v : {};
    const to = Array.isArray(d.to) ? d.to.map(String) : typeof d.to === 'string' && d.to ? [d.to] : [];
    if (!to.length) throw new Error(`[Categorize] 'To' of category ${name} can not be empty!`);
    const examples = Array.isArray(d.examples) ? d.examples.map((e) => (isPlainObject(e) ? asText(e.value ?? '') : asText(e))) : typeof d.examples === 'string' ? d.examples.split('\n') : [];
    return { name, description: asText(d.description ?? ''), examples: examples.filter((e) => e.trim()), to };
  });
}

function systemPrompt(cats: Category[]): string {
  const lines = cats.flatMap((c) => c.examples.map((e) => `USER: "${e.replace(/\n/g, '    ')}" → ${c.name}`));
  const desc = cats.filter((c) => c.description).map((c) => `\n------\nCategory: ${c.name}\nDescription: ${c.description}`);
  let p = `
You are an advanced classification system that categorizes user questions into specific types. Analyze the input question and classify it into ONE of the following categories:
${cats.map((c) => c.name).join('\n - ')}

Here's description of each category:
 - ${desc.join('\n')}

---- Instructions ----
 - Consider both explicit mentions and implied context
 - Prioritize the most specific applicable category
 - Return only the category name without explanations
 - Use "Other" only when no other category fits
 `;
  if (lines.length) p += `\n---- Examples ----\n${lines.join('\n')}\n`;
  return p;
}

/** The category nearest the query by embeddings: best cosine over its description and examples. */
export async function nearestCategory(cats: Category[], query: string, embed: (t: string[]) => Promise<Float32Array[]>): Promise<{ name: string; scores: Record<string, number> }> {
  const texts: string[] = [query.trim() || ' '];
  const owner: number[] = [];
  cats.forEach((c, i) => {
    for (const t of [`${c.name}. ${c.description}`.trim(), ...c.examples]) {
      if (!t.trim()) continue;
      texts.push(t);
      owner.push(i);
    }
  });
  const vecs = await embed(texts);
  const q = vecs[0]!;
  const scores = cats.map(() => -Infinity);
  for (let j = 1; j < vecs.length; j++) scores[owner[j - 1]!] = Math.max(scores[owner[j - 1]!]!, cosine(q, vecs[j]!));
  let best = cats.length - 1;
  for (let i = 0; i < cats.length; i++) if (scores[i]! > scores[best]!) best = i;
  return { name: cats[best]!.name, scores: Object.fromEntries(cats.map((c, i) => [c.name, Number(scores[i]!.toFixed(4))])) };
}

const fold = (s: string) => s.trim().toLowerCase();

/**
 * The category a model's answer names: the one whose name occurs most often in it, names compared
 * with surrounding whitespace trimmed and case folded (a model answers `Negative review` for the
 * shipped category `"Negative review "`), the first category on a tie; undefined when none
 * occurs. Where one name contains another (`Refund` in `Refund request`), an occurrence counts for
 * the longest name only. RAGFlow counts exact substrings, so it misses such answers and takes the
 * last category.
 */
export function categoryInAnswer(answer: string, names: string[]): string | undefined {
  let text = answer.toLowerCase();
  const counts = new Map<string, number>();
  const order = names.map((name, i) => ({ name, i, key: fold(name) })).filter((x) => x.key).sort((a, b) => b.key.length - a.key.length || a.i - b.i);
  for (const { name, key } of order) {
    const parts = text.split(key);
    if (parts.length > 1) counts.set(name, (counts.get(name) ?? 0) + parts.length - 1);
    // Masked: a shorter name inside this one does not count this occurrence again.
    text = parts.join('\u0000');
  }
  let best: string | undefined;
  for (const name of names) if ((counts.get(name) ?? 0) > (best === undefined ? 0 : counts.get(best)!)) best = name;
  return best;
}

export const CATEGORIZE: ComponentImpl = {
  inputElements(n, c) {
    const key = String(n.param('query') || 'sys.query');
    return c.inputElementsFromText(n, `{${key}}`);
  },
  async invoke(n, c, kwargs) {
    const cats = categories(n);
    const key = String(n.param('query') || 'sys.query');
    const raw = key in kwargs ? kwargs[key] : c.getVariableValue(key);
    const query = asText(await materialize(raw));
    n.setInput(key, query);
    const model = c.deps.chatModel(String(n.param('llm_id') ?? ''));
    let chosen: string;
    if (isExtractive(model)) {
      const r = await nearestCategory(cats, query, (t) => c.deps.embed(t));
      chosen = r.name;
      n.setOutput('_scores', r.scores);
    } else {
      const window = Math.max(1, Math.floor(Number(n.param('message_history_window_size') ?? 1)) || 1);
      const msg = c.getHistory(window);
      if (!msg.length) msg.push({ role: 'user', content: '' });
      msg[msg.length - 1]!.content = query;
      const user = `\n---- Real Data ----\n${msg.map((m) => `${m.role.toUpperCase()}: "${m.content.replace(/\n/g, '')}"`).join(' | ')} →\n`;
      const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt(cats) }, { role: 'user', content: user }];
      const ans = (await model.chat(messages, { ...genConf(n.params), signal: c.signal })).content;
      chosen = categoryInAnswer(ans, cats.map((x) => x.name)) ?? cats[cats.length - 1]!.name;
    }
    n.setOutput('category_name', chosen);
    n.setOutput('_next', cats.find((x) => x.name === chosen)!.to);
  },
};
