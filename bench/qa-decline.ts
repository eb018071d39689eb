/**
 * When should the built-in answer model decline? The figures its decision sees, for every question
 * of bench/data/qa-set.json (answerable and unanswerable), and the trade-off curve of decline rules:
 * answers that hold the fact (answerable) against declines (unanswerable), per part.
 *
 *   npx tsx bench/qa-decline.ts [--json out.json] [--set bench/data/qa-set.json]
 *
 * Each question is retrieved with a default chat's settings and its passages given to the model
 * (`ExtractiveChatModel.explain`), as `session.ask` does. The curve is printed for both parts; pick
 * a rule on the tuning part only (the held-out rows are printed as totals, never one by one).
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_EMBEDDING_MODEL, ModelRegistry } from '../src/embed/index.js';
import { ExtractiveChatModel, type Support } from '../src/llm/extractive.js';
import { analyze, countTokens, splitSentences } from '../src/text/index.js';
import { holds, loadQaSet, presentDocuments, rateText, type Part } from './lib/qa-set.js';
import { openQaChat } from './lib/qa-chat.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'string' },
    set: { type: 'string', default: resolve(import.meta.dirname, 'data/qa-set.json') },
  },
});

let absentOf: (q: string) => string[] = () => [];
interface Row { names: boolean; absent?: string[]; id: string; part: Part; kind: 'verbatim' | 'paraphrased' | 'unanswerable'; question: string; holds: boolean; support?: Support; quoted: string }

const set = loadQaSet(args.set!);
const facts = new Map(set.facts.map((f) => [f.id, f]));
const present = presentDocuments(set);

const registry = new ModelRegistry();
const embedder = registry.embedder(DEFAULT_EMBEDDING_MODEL);
// explain() reports the figures whatever the model's own rule; the rules compared are applied below.
const model = new ExtractiveChatModel({ analyze, splitSentences, countTokens, embed: (t) => embedder.embed(t) });
const rows: Row[] = [];
const qa = await openQaChat(present, 'ragloom-qa-decline-');
try {
  absentOf = (q: string) => qa.unknown(q);
  const explain = async (question: string) => {
    const items = await qa.knowledge(question, model.maxTokens);
    return items.length ? model.explain(items, question) : { quoted: [] as string[], declines: true, support: undefined };
  };
  for (const q of set.questions) {
    const f = facts.get(q.fact)!;
    if (!present.has(f.doc)) continue;
    const e = await explain(q.question);
    rows.push({ names: model.namesUnknown(q.question, absentOf(q.question)), absent: absentOf(q.question), id: q.id, part: f.part, kind: q.style, question: q.question, holds: holds(e.quoted.join(' '), f.check), support: e.support, quoted: e.quoted.join(' ') });
  }
  for (const u of set.unanswerable) {
    const e = await explain(u.question);
    rows.push({ names: model.namesUnknown(u.question, absentOf(u.question)), absent: absentOf(u.question), id: u.id, part: u.part, kind: 'unanswerable', question: u.question, holds: false, support: e.support, quoted: e.quoted.join(' ') });
  }
} finally {
  await qa.close();
  await registry.close();
}

/** A decline rule: true = quote, false = decline. */
type Rule = (s: Support, r: Row) => boolean;
const rules: Array<[string, Rule]> = [['none (quote whenever a sentence is picked)', () => true], ['answer kind present', (s) => s.typed]];
rules.push(['names nothing unknown', (_s, r) => !r.names]);
// The sentence's cosine against its passage's vector side, and the two retrieval sides of its passage.
for (const r of [0.5, 0.6, 0.7]) rules.push([`names nothing unknown, cosine ≥ ${r} × the passage's vector side`, (s, row) => !row.names && s.cosine >= r * (s.vectorSimilarity ?? 0)]);
for (const t of [0.3, 0.4]) for (const v of [0.8, 0.85]) rules.push([`names nothing unknown, not (term side < ${t} and vector side < ${v})`, (s, row) => !row.names && !((s.termSimilarity ?? 0) < t && (s.vectorSimilarity ?? 0) < v)]);
// The rule the model keeps (minCover 0.4, weakCosine 0.45) is among these.
for (const c of [0.3, 0.4, 0.5]) for (const v of [0.4, 0.45, 0.5, 0.55]) rules.push([`names nothing unknown, not (cover < ${c} and cosine < ${v})`, (s, r) => !r.names && !(s.cover < c && s.cosine < v)]);
for (const c of [0.2, 0.3]) for (const v of [0.6, 0.65]) rules.push([`names nothing unknown, not (cover < ${c} and cosine < ${v})`, (s, r) => !r.names && !(s.cover < c && s.cosine < v)]);
for (const c of [0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6]) rules.push([`kind present, cover ≥ ${c}`, (s) => s.typed && s.cover >= c]);
for (const c of [0.3, 0.4, 0.5, 0.6]) rules.push([`kind present, passage cover ≥ ${c}`, (s) => s.typed && s.passageCover >= c]);
for (const c of [0.4, 0.5]) for (const v of [0.5, 0.6, 0.7]) rules.push([`kind present, cover ≥ ${c} or cosine ≥ ${v}`, (s) => s.typed && (s.cover >= c || s.cosine >= v)]);

const lines = [
  '| rule | part | verbatim holds | paraphrased holds | answerable holds | unanswerable declined |',
  '|---|---|---:|---:|---:|---:|',
];
const summary: Record<string, unknown>[] = [];
for (const [name, rule] of rules) {
  for (const part of ['tune', 'held-out'] as Part[]) {
    const rs = rows.filter((r) => r.part === part);
    const quotes = (r: Row) => !!r.support && rule(r.support, r);
    const ok = (k: Row['kind']) => { const x = rs.filter((r) => r.kind === k); return [x.filter((r) => r.holds && quotes(r)).length, x.length] as const; };
    const [v, nv] = ok('verbatim');
    const [p, np] = ok('paraphrased');
    const un = rs.filter((r) => r.kind === 'unanswerable');
    const dec = un.filter((r) => !quotes(r)).length;
    summary.push({ rule: name, part, verbatim: v / nv, paraphrased: p / np, answerable: (v + p) / (nv + np), unanswerable_declined: dec, unanswerable: un.length });
    lines.push(`| ${name} | ${part} | ${rateText(v, nv)} | ${rateText(p, np)} | ${rateText(v + p, nv + np)} | ${dec}/${un.length} |`);
  }
}
for (const s of summary) console.log(JSON.stringify(s));
console.log(`\n${lines.join('\n')}`);
// The tuning part's figures one by one (never the held-out part's).
if (args.json) writeFileSync(args.json, JSON.stringify(rows.filter((r) => r.part === 'tune'), null, 2));
