/**
 * Learns the built-in answer model's sentence scorer from the tuning part of bench/data/qa-set.json
 * (never the held-out part): each tuning question is retrieved as a default chat does
 * (bench/lib/qa-chat.ts), the hand-weighted model lists the sentences it may quote with their
 * features (`ExtractiveChatModel.sentenceFeatures`), each labelled by the bench's own fact check
 * (`holds`), and a pairwise logistic regression (fit.ts) is fitted. Its regularisation λ (towards
 * the hand weights) is chosen by cross-validation within the tuning part: five folds of facts (a
 * fact's verbatim and paraphrased questions in the same fold), each answered by the model trained on
 * the other four, as `session.ask` would. Writes
 *
 * - scripts/sentence-scorer/tuning-features.json: the training data (features rounded to 6 digits);
 * - scripts/sentence-scorer/weights.json: the best learned setting's weights fitted on all of it,
 *   whether it beat the hand weights across the folds (`kept`), and its figures;
 *
 * and prints the cross-validated answer rates per setting (loss, λ, the `relativeScore` that goes
 * with the learned scale). λ 1e6 (CHECK_LAMBDA) is a check: it gives back the hand weights' answers. Same input,
 * same bytes.
 *
 *   npx tsx scripts/sentence-scorer/train.ts [--set bench/data/qa-set.json]
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_EMBEDDING_MODEL, ModelRegistry } from '../../src/embed/index.js';
import { ExtractiveChatModel, SENTENCE_FEATURES, type SentenceScorer } from '../../src/llm/extractive.js';
import type { KnowledgeItem } from '../../src/llm/types.js';
import { wordnetRelatedTerms } from '../../src/llm/related-terms.js';
import { analyze, countTokens, splitSentences } from '../../src/text/index.js';
import { holds, loadQaSet, presentDocuments, rateText, type Check } from '../../bench/lib/qa-set.js';
import { openQaChat } from '../../bench/lib/qa-chat.js';
import { rng } from '../../bench/lib/synth.js';
import { fitPairwise, roundWeight, type Loss, type TrainingQuestion } from './fit.js';

const { values: args } = parseArgs({ options: { set: { type: 'string', default: resolve(import.meta.dirname, '../../bench/data/qa-set.json') } } });

export const FOLDS = 5;
export const SEED = 31;
/** λ candidates (towards the hand weights). */
const LAMBDAS = [0.01, 0.1, 1, 10, 100];
/** A λ so large that the fit stays at the hand weights: a check that the learned path gives their answers. */
const CHECK_LAMBDA = 1e6;
/** Share of the best score a further sentence must reach (`relativeScore`), for the learned scorer. */
const RELATIVE = [0.5, 0.75];
/** w₀: the hand-weighted model (its log score, weight 1). */
export const PRIOR = SENTENCE_FEATURES.map((f) => (f === 'logHand' ? 1 : 0));

interface Q { id: string; fact: string; style: 'verbatim' | 'paraphrased' | 'unanswerable'; question: string; check?: Check; items: KnowledgeItem[]; unknown: string[]; topHolds: boolean; fold: number }

const set = loadQaSet(args.set!);
const facts = new Map(set.facts.map((f) => [f.id, f]));
const present = presentDocuments(set);
// Folds: the tuning facts in id order, shuffled with the seed, dealt in turn; unanswerable questions likewise.
const deal = (ids: string[]): Map<string, number> => {
  const r = rng(SEED);
  const s = [...ids].sort();
  for (let i = s.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  return new Map(s.map((id, i) => [id, i % FOLDS]));
};
const tuneFacts = set.facts.filter((f) => f.part === 'tune' && present.has(f.doc));
const factFold = deal(tuneFacts.map((f) => f.id));
const unFold = deal(set.unanswerable.filter((u) => u.part === 'tune').map((u) => u.id));

const registry = new ModelRegistry();
const embedder = registry.embedder(DEFAULT_EMBEDDING_MODEL);
const related = wordnetRelatedTerms();
const model = (scorer?: SentenceScorer, relativeScore?: number) => new ExtractiveChatModel({ analyze, splitSentences, countTokens, embed: (t) => embedder.embed(t), related, scorer, relativeScore });
const qs: Q[] = [];
const qa = await openQaChat(present, 'ragloom-scorer-');
const empty = qa.empty;
try {
  for (const q of set.questions) {
    const f = facts.get(q.fact)!;
    if (f.part !== 'tune' || !present.has(f.doc)) continue;
    const items = await qa.knowledge(q.question);
    qs.push({ id: q.id, fact: f.id, style: q.style, question: q.question, check: f.check, items, unknown: qa.unknown(q.question), topHolds: !!items[0] && items[0].title === f.doc && holds(items[0].content, f.check), fold: factFold.get(f.id)! });
  }
  for (const u of set.unanswerable) {
    if (u.part !== 'tune') continue;
    qs.push({ id: u.id, fact: '', style: 'unanswerable', question: u.question, items: await qa.knowledge(u.question), unknown: qa.unknown(u.question), topHolds: false, fold: unFold.get(u.id)! });
  }
} finally {
  await qa.close();
}

try {
  // The training data: each answerable question's candidates the model may quote.
  const hand = model();
  const data: Array<TrainingQuestion & { fold: number; style: string }> = [];
  for (const q of qs) {
    if (q.style === 'unanswerable') continue;
    const cands = (await hand.sentenceFeatures(q.items, q.question)).filter((c) => c.eligible);
    data.push({ id: q.id, fold: q.fold, style: q.style, x: cands.map((c) => c.features.map(roundWeight)), y: cands.map((c) => holds(c.text, q.check!)) });
  }
  const withFact = data.filter((d) => d.y.some(Boolean)).length;
  process.stderr.write(`${data.length} answerable tuning questions, ${withFact} with a quotable sentence holding the fact, ${data.reduce((n, d) => n + d.x.length, 0)} candidates\n`);
  writeFileSync(resolve(import.meta.dirname, 'tuning-features.json'), `${JSON.stringify({ features: SENTENCE_FEATURES, folds: FOLDS, seed: SEED, questions: data })}\n`);

  const strip = (s: string) => s.replace(/\s*\[ID:\d+\]/g, '').trim();
  const answer = async (m: ExtractiveChatModel, q: Q) => {
    const r = await m.chat([{ role: 'user', content: q.question }], { knowledge: q.items, empty_response: empty, unknown_terms: q.unknown });
    const declined = strip(r.content) === strip(empty);
    return { holds: q.style === 'unanswerable' ? declined : holds(r.content, q.check!), declined, declinedTop: declined && q.topHolds };
  };
  // Ranking alone, from the data: questions whose first / first three quotable sentences by w·x hold the fact.
  const ranks = (qsIn: typeof data, weights: readonly number[]) => {
    let top1 = 0;
    let top3 = 0;
    for (const d of qsIn) {
      const z = d.x.map((x) => x.reduce((acc, v, i) => acc + v * weights[i]!, 0));
      const order = z.map((v, i) => [v, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]).map(([, i]) => i);
      if (order.slice(0, 1).some((i) => d.y[i])) top1++;
      if (order.slice(0, 3).some((i) => d.y[i])) top3++;
    }
    return { top1, top3 };
  };
  const rows: string[] = [];
  type Setting = { loss: Loss; lambda: number; relative: number };
  const cv: Array<{ s: Setting; answers: number }> = [];
  const settings: Setting[] = [
    { loss: 'pairwise', lambda: Infinity, relative: 0.75 },
    { loss: 'pairwise', lambda: CHECK_LAMBDA, relative: 0.75 },
    ...(['pairwise', 'softmax'] as const).flatMap((loss) => LAMBDAS.flatMap((lambda) => RELATIVE.map((relative) => ({ loss, lambda, relative })))),
  ];
  for (const s of settings) {
    const tally = { verbatim: [0, 0], paraphrased: [0, 0], unanswerable: [0, 0], declines: 0, declinedTop: 0, top1: 0, top3: 0 };
    for (let fold = 0; fold < FOLDS; fold++) {
      const learned = Number.isFinite(s.lambda);
      const weights = learned ? fitPairwise(data.filter((d) => d.fold !== fold), PRIOR, s.lambda, s.loss).weights : PRIOR;
      const m = learned ? model({ weights }, s.relative) : hand;
      const r = ranks(data.filter((x) => x.fold === fold), weights);
      tally.top1 += r.top1;
      tally.top3 += r.top3;
      for (const q of qs.filter((x) => x.fold === fold)) {
        const a = await answer(m, q);
        const t = tally[q.style];
        t[1]++;
        if (a.holds) t[0]++;
        if (a.declined && q.style !== 'unanswerable') tally.declines++;
        if (a.declinedTop) tally.declinedTop++;
      }
    }
    const [v, nv] = tally.verbatim as [number, number];
    const [p, np] = tally.paraphrased as [number, number];
    const [u, nu] = tally.unanswerable as [number, number];
    cv.push({ s, answers: v + p });
    const name = !Number.isFinite(s.lambda) ? 'hand weights (no training)' : s.lambda === CHECK_LAMBDA ? `check: ${s.loss}, λ ${s.lambda} (the hand weights through the learned path)` : `${s.loss}, λ ${s.lambda}, relative ${s.relative}`;
    rows.push(`| ${name} | ${tally.top1} / ${tally.top3} | ${rateText(v, nv)} | ${rateText(p, np)} | ${rateText(v + p, nv + np)} | ${tally.declines} | ${tally.declinedTop} | ${u}/${nu} |`);
    process.stderr.write(`${rows[rows.length - 1]}\n`);
  }
  // The learned setting with the most answers across the folds; ties go to the larger λ (closer to the hand weights),
  // then the pairwise loss, then the relative share nearer the hand model's 0.75.
  const handAnswers = cv[0]!.answers;
  const chosen = cv.slice(2).sort((a, b) => b.answers - a.answers || b.s.lambda - a.s.lambda ||
    (a.s.loss === 'pairwise' ? -1 : 1) - (b.s.loss === 'pairwise' ? -1 : 1) || Math.abs(a.s.relative - 0.75) - Math.abs(b.s.relative - 0.75))[0]!;
  const kept = chosen.answers > handAnswers;
  const fit = fitPairwise(data, PRIOR, chosen.s.lambda, chosen.s.loss);
  // How far a linear scorer over these features can go at all: fitted and ranked on the same questions.
  const capacity = ranks(data, fitPairwise(data, PRIOR, 0.01, 'softmax').weights);
  const handRanks = ranks(data, PRIOR);
  console.log([
    `| scorer (${FOLDS}-fold CV within the tuning part) | first / first 3 quotable sentences hold the fact (of ${data.length}) | verbatim holds | paraphrased holds | answerable holds | declines | declined, answer on top | unanswerable declined |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|', ...rows].join('\n'));
  console.log(`\n${withFact} of ${data.length} questions have a quotable sentence that holds the fact. In-sample (softmax, λ 0.01, fitted and ranked on all of them): first ${capacity.top1}, first 3 ${capacity.top3}; hand weights: ${handRanks.top1}, ${handRanks.top3}.`);
  console.log(`Best learned setting: ${chosen.s.loss} loss, λ ${chosen.s.lambda}, relative ${chosen.s.relative}: CV answers ${chosen.answers} against ${handAnswers} with the hand weights: ${kept ? 'better, a candidate for the default' : 'not better, not kept'}. Fitted on all ${fit.questions} questions with a pair (${fit.pairs} pairs), ${fit.iterations} Newton steps.`);
  const out = {
    description: 'The built-in answer model\'s learned sentence scorer (ExtractiveChatModel `scorer`), fitted on the tuning part of bench/data/qa-set.json by `npx tsx scripts/sentence-scorer/train.ts` from scripts/sentence-scorer/tuning-features.json. Not the default unless `kept`.',
    kept, loss: chosen.s.loss, lambda: chosen.s.lambda, relativeScore: chosen.s.relative,
    cvAnswers: chosen.answers, handAnswers, questions: data.length,
    features: SENTENCE_FEATURES, weights: fit.weights,
  };
  writeFileSync(resolve(import.meta.dirname, 'weights.json'), `${JSON.stringify(out, null, 2)}\n`);
} finally {
  await registry.close();
}
