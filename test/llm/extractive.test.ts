import { describe, expect, it, test } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { analyze, countTokens, splitSentences } from '../../src/text/index.js';
import {
  ExtractiveChatModel,
  parseKnowledge,
  NO_KNOWLEDGE_ANSWER,
  NOT_FOUND_ANSWER,
  EXTRACTIVE_MODEL_ID,
} from '../../src/llm/extractive.js';
import { ChatModelError } from '../../src/llm/errors.js';
import { wordnetRelatedTerms } from '../../src/llm/related-terms.js';
import type { ChatMessage, ChatOptions, KnowledgeItem } from '../../src/llm/types.js';
import { hashedVector } from '../support/embedding-server.js';

const KNOWLEDGE: KnowledgeItem[] = [
  {
    id: 0,
    title: 'firefox.md',
    content:
      'Firefox is a web browser made by Mozilla. Firefox was originally named Phoenix but the name was changed to avoid trademark conflicts. The current name, Firefox, was chosen on February 9, 2004.',
  },
  {
    id: 1,
    title: 'thunderbird.md',
    content: 'Thunderbird is an email client. It is developed by the volunteers of the Mozilla Community.',
  },
  {
    id: 2,
    title: 'rust.md',
    content: 'Rust is a programming language. It is designed for safety, concurrency, and performance.',
  },
];

const model = (o: Partial<ConstructorParameters<typeof ExtractiveChatModel>[0]> = {}) => new ExtractiveChatModel({ analyze, splitSentences, countTokens, ...o });
const ask = (q: string, history: ChatMessage[] = []): ChatMessage[] => [{ role: 'system', content: 'Answer with citations [ID:i].' }, ...history, { role: 'user', content: q }];

describe('ExtractiveChatModel', () => {
  it('has the built-in id, a context window and says what it cannot do', () => {
    const m = model();
    expect(m.id).toBe(EXTRACTIVE_MODEL_ID);
    expect(m.id).toBe('ragloom-extractive@Builtin');
    expect(m.maxTokens).toBeGreaterThanOrEqual(8192);
    expect(m.capabilities).toEqual({ rewrite: false, keywords: false, tools: false });
    expect(() => new ExtractiveChatModel({} as never)).toThrow(/analyze/);
  });

  it('answers with the sentences that answer the question, cited', async () => {
    const r = await model().chat(ask('What was Firefox originally named?'), { knowledge: KNOWLEDGE });
    expect(r.content).toContain('Firefox was originally named Phoenix');
    expect(r.content).toMatch(/\[ID:0\]$/);
    expect(r.finish_reason).toBe('stop');
    expect(r.usage.completion_tokens).toBe(countTokens(r.content));
    expect(r.usage.total_tokens).toBe(r.usage.prompt_tokens + r.usage.completion_tokens);
    expect(r.usage.prompt_tokens).toBeGreaterThan(0);
    // Never invents text: every sentence of the answer is a sentence of the knowledge.
    const all = KNOWLEDGE.flatMap((k) => splitSentences(k.content).map((s) => s.text));
    for (const piece of r.content.replace(/ ?\[ID:\d+\]/g, '\n').split('\n').filter(Boolean)) {
      for (const s of splitSentences(piece)) expect(all).toContain(s.text);
    }
  });

  it('is deterministic: the same input gives the same bytes, with or without embeddings', async () => {
    const embed = async (t: string[]) => t.map((x) => Float32Array.from(hashedVector(x, 64)));
    for (const o of [{}, { embed }]) {
      const a = await model(o).chat(ask('When was the name Firefox chosen?'), { knowledge: KNOWLEDGE });
      const b = await model(o).chat(ask('When was the name Firefox chosen?'), { knowledge: KNOWLEDGE });
      const m = model(o);
      const c = await m.chat(ask('When was the name Firefox chosen?'), { knowledge: KNOWLEDGE });
      const d = await m.chat(ask('When was the name Firefox chosen?'), { knowledge: KNOWLEDGE });
      expect(Buffer.from(a.content)).toEqual(Buffer.from(b.content));
      expect(c.content).toBe(a.content);
      expect(d.content).toBe(a.content);
      expect(a.content).toContain('February 9, 2004');
    }
  });

  it('uses the injected embedder for the question and candidate sentences', async () => {
    const calls: string[][] = [];
    const embed = async (t: string[]) => {
      calls.push(t);
      return t.map((x) => Float32Array.from(hashedVector(x, 64)));
    };
    // (Rust's passage ranked first: only the first two documents of the ranking are quoted.)
    const r = await model({ embed }).chat(ask('What is Rust designed for?'), { knowledge: [KNOWLEDGE[2]!, ...KNOWLEDGE.slice(0, 2)] });
    expect(calls).toHaveLength(1);
    expect(calls[0]![0]).toBe('What is Rust designed for?');
    expect(r.content).toContain('designed for safety, concurrency, and performance');
    // The sentence that refers back ("It is designed …") brings the one it refers to; each is cited.
    expect(r.content).toContain('Rust is a programming language. [ID:2] It is designed');
  });

  it('answers with one to three sentences of the best document, each cited with an id that was given', async () => {
    const knowledge = KNOWLEDGE.map((k, i) => ({ ...k, id: [7, 3, 12][i]! }));
    const r = await model().chat(ask('What was Firefox originally named, and when was the name chosen?'), { knowledge });
    expect(r.content).toContain('Phoenix');
    expect(r.content).toContain('February 9, 2004');
    // Each sentence is followed by its passage's marker; nothing comes from the other documents.
    const sentences = r.content.split(/(?<=\[ID:\d+\])\s*/).filter(Boolean);
    expect(sentences.length).toBeGreaterThanOrEqual(2);
    expect(sentences.length).toBeLessThanOrEqual(3);
    for (const x of sentences) expect(x).toMatch(/[.!?] \[ID:7\]$/);
    expect(r.content).not.toMatch(/Thunderbird|Rust/);
    // At most three sentences, however many would do.
    const many = [{ id: 0, title: 'a.md', content: Array.from({ length: 8 }, (_, i) => `Firefox release ${i} was named Phoenix ${i}.`).join(' ') }];
    const m3 = await model().chat(ask('What was Firefox named?'), { knowledge: many });
    expect(m3.content.match(/\[ID:0\]/g)).toHaveLength(3);
    expect(await model({ maxSentences: 1 }).chat(ask('What was Firefox named?'), { knowledge: many })).toMatchObject({ content: expect.stringMatching(/^[^[]*\[ID:0\]$/) });
  });

  it('quotes only the documents that rank highest (the first two of the ranking)', async () => {
    // The third document's sentence holds more of the question's words, but two documents rank above it.
    const knowledge: KnowledgeItem[] = [
      { id: 0, title: 'architecture.md', content: 'The hybrid score of a chunk mixes its vector and term similarity.', similarity: 0.72 },
      { id: 1, title: 'retrieval.md', content: 'The vector side brings candidates of its own.', similarity: 0.6 },
      { id: 2, title: 'cli.md', content: 'The table shows the hybrid similarity score of each chunk, computed for the question.', similarity: 0.49 },
    ];
    const q = ask('How is the hybrid similarity score of a chunk computed?');
    const r = await model().chat(q, { knowledge });
    expect(r.content).toMatch(/^The hybrid score of a chunk mixes its vector and term similarity\. \[ID:0\]/);
    expect(r.content).not.toContain('[ID:2]');
    // topDocuments 3: the third document may answer again.
    expect((await model({ topDocuments: 3 }).chat(q, { knowledge })).content).toContain('[ID:2]');
    expect(() => model({ topDocuments: 0 })).toThrow(/topDocuments must be an integer ≥ 1, got 0/);
  });

  it('a formula or code line is never taken for a title: the sentence that introduces it brings it', async () => {
    const knowledge: KnowledgeItem[] = [{
      id: 0, title: 'architecture.md',
      content: '## The similarity score\nFor a question q and a chunk c, ragloom computes\n\n```\nsimilarity = w · vector_similarity + (1 − w) · term_similarity\n```\n\nwith w the weight of the vector side.',
    }];
    const r = await model().chat(ask('How is the similarity score computed?'), { knowledge });
    expect(r.content).toContain('For a question q and a chunk c, ragloom computes [ID:0]\nsimilarity = w · vector_similarity + (1 − w) · term_similarity [ID:0]');
    // Alone, a grammar rule ("name = …") weighs as code: the prose that explains it answers.
    const rfc: KnowledgeItem[] = [{
      id: 0, title: 'rfc5322.txt',
      content: 'The rules:\n\n   local-part      =   dot-atom / quoted-string / obs-local-part\n\nThe local part is a dot-atom or a quoted string, or in old mail an obs-local-part.',
    }];
    const a = await model({ maxSentences: 1 }).chat(ask('What can the local part be?'), { knowledge: rfc });
    expect(a.content).toBe('The local part is a dot-atom or a quoted string, or in old mail an obs-local-part. [ID:0]');
  });

  it('weighs passages by their retrieval score, and prefers the kind of answer asked for', async () => {
    const twin = (a: number, b: number): KnowledgeItem[] => [
      { id: 0, title: 'a.md', content: 'The Alpha library was released by the Beta team.', similarity: a },
      { id: 1, title: 'b.md', content: 'The Alpha library was released by the Gamma team.', similarity: b },
    ];
    const q = ask('Which team released the Alpha library?');
    expect((await model().chat(q, { knowledge: twin(0.9, 0.3) })).content).toMatch(/^The Alpha library was released by the Beta team\. \[ID:0\]/);
    expect((await model().chat(q, { knowledge: twin(0.3, 0.9) })).content).toMatch(/^The Alpha library was released by the Gamma team\. \[ID:1\]/);
    // "How many" prefers the sentence with a number, "when" the one with a date.
    const facts: KnowledgeItem[] = [{ id: 0, title: 'c.md', content: 'The survey counted the volunteers of the project carefully. The survey counted 40,000 volunteers in 2013. The volunteers met in London in June 2014.' }];
    expect((await model().chat(ask('How many volunteers did the survey count?'), { knowledge: facts, empty_response: 'E' })).content).toMatch(/^The survey counted 40,000 volunteers in 2013\./);
    expect((await model().chat(ask('When were the volunteers in London?'), { knowledge: facts, empty_response: 'E' })).content).toMatch(/^The volunteers met in London in June 2014\./);
  });

  it('reads a "when" inside a question as a condition, not as a question for a date', async () => {
    const k: KnowledgeItem[] = [{ id: 0, title: 'cli.md', content: 'Styles map to HTML elements. Images are kept inline. The output file is specified as HTML by default since version 2 of 2019. Tables keep their borders. If no file is specified, output is written to stdout. Lists keep their numbering.' }];
    const one = model({ maxSentences: 1 });
    expect((await one.chat(ask('What about the output when no file is specified?'), { knowledge: k })).content).toBe('If no file is specified, output is written to stdout. [ID:0]');
    // A question that asks "when" still asks for a date, also after "and".
    expect((await one.chat(ask('When was HTML specified as the output?'), { knowledge: k })).content).toMatch(/of 2019\./);
    expect((await one.chat(ask('What is the output file, and when was HTML specified?'), { knowledge: k })).content).toMatch(/of 2019\./);
  });

  it('quotes "Second, …" with the "First, …" of its enumeration', async () => {
    const k: KnowledgeItem[] = [{
      id: 0, title: 'semver.md',
      content: 'The purpose of this behavior is twofold. First, prerelease versions change quickly and contain breaking changes. Therefore they are excluded from range matching.\n\nSecond, a user who opted into a prerelease version has chosen that specific set of versions.',
    }];
    const r = await model().chat(ask('What has a user who opted into a prerelease version chosen?'), { knowledge: k });
    expect(r.content).toMatch(/^First, prerelease versions change quickly and contain breaking changes\. \[ID:0\]\nSecond, a user who opted/);
  });

  it('answers empty_response, or says so, when nothing in the knowledge is relevant', async () => {
    const m = model();
    const q = ask('What is the boiling point of mercury?');
    expect((await m.chat(q, { knowledge: KNOWLEDGE, empty_response: 'Sorry, not in the knowledge base.' })).content).toBe('Sorry, not in the knowledge base.');
    expect((await m.chat(q, { knowledge: KNOWLEDGE })).content).toBe(NOT_FOUND_ANSWER);
    expect((await m.chat(q, { knowledge: [] })).content).toBe(NOT_FOUND_ANSWER);
    // A blank empty_response is no answer: the fixed sentence is used.
    expect((await m.chat(q, { knowledge: KNOWLEDGE, empty_response: '  ' })).content).toBe(NOT_FOUND_ANSWER);
    const s = [];
    for await (const d of m.stream(q, { knowledge: KNOWLEDGE, empty_response: 'Nothing.' })) s.push(d);
    expect(s.map((d) => d.content).join('')).toBe('Nothing.');
    expect(s[s.length - 1]).toMatchObject({ finish_reason: 'stop' });
  });


  it('declines a question near the passages\' topic that they do not answer: neither its words nor its meaning, or it names what the knowledge base never mentions', async () => {
    const aws: KnowledgeItem[] = [{
      id: 0, title: 'aws-newsletter.eml',
      content: 'Amazon Web Services, Inc. is a subsidiary of Amazon.com, Inc. Amazon Web Services runs the Innovate online conference every autumn. This message was produced by Amazon Web Services.',
    }];
    // An embedder for which every sentence is as far from the question (cosine 0.4): only the words can support one.
    const far = async (t: string[]) => t.map((_, i) => Float32Array.from(i === 0 ? [1, 0] : [0.4, Math.sqrt(1 - 0.16)]));
    const m = model({ embed: far });
    const empty = { knowledge: aws, empty_response: 'Nothing.' };
    // "amazon" is in every sentence; what the question is about ("current chief executive") in none.
    expect((await m.chat(ask('who is the current chief executive of amazon?'), empty)).content).toBe('Nothing.');
    const e = await m.explain(aws, 'who is the current chief executive of amazon?');
    expect(e.declines).toBe(true);
    expect(e.support!.cover).toBeLessThan(0.4);
    // A sentence holding what the question asks about is quoted, close in meaning or not.
    expect((await m.chat(ask('what is amazon web services a subsidiary of?'), empty)).content).toMatch(/is a subsidiary of Amazon\.com, Inc\..*\[ID:0\]/);
    // A question naming (a capital, a digit) a term no chunk holds, as retrieval reports it: declined.
    expect((await m.chat(ask('When does Amazon run the Innovate conference in Jupiter?'), { ...empty, unknown_terms: ['jupit'] })).content).toBe('Nothing.');
    expect((await m.chat(ask('When does Amazon run the Innovate conference?'), { ...empty, unknown_terms: [] })).content).toContain('every autumn');
    // An unknown word in lower case may be a paraphrase: not a reason alone.
    expect(m.namesUnknown('When does Amazon run the Innovate meetup?', ['meetup'])).toBe(false);
    expect(m.namesUnknown('Which Boeing 747 flew first?', ['747'])).toBe(true);
  });
  it('without any knowledge (a chat without datasets) says honestly what it is', async () => {
    const m = model();
    const r = await m.chat([{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'Hello, who are you?' }]);
    expect(r.content).toBe(NO_KNOWLEDGE_ANSWER);
    expect(r.content).toMatch(/extractive/);
    expect(r.content).toMatch(/knowledge base/);
    expect((await m.chat([{ role: 'user', content: 'Hi' }], { empty_response: 'Ask me about the docs.' })).content).toBe('Ask me about the docs.');
  });

  it('reads the knowledge block of a RAGFlow prompt when options.knowledge is absent', async () => {
    const block = KNOWLEDGE.map((k) => `\nID: ${k.id}\n├── Title: ${k.title}\n├── URL: https://example.com/${k.id}\n└── Content:\n${k.content}`).join('\n\n------\n\n');
    const system = `You are an intelligent assistant.\nHere is the knowledge base:\n\n------\n${block}\nThe above is the knowledge base.\n\n# Citations\n- Cite with [ID:i].`;
    const parsed = parseKnowledge(system)!;
    expect(parsed).toEqual(KNOWLEDGE);
    expect(parseKnowledge('no block here')).toBeUndefined();
    const m = model();
    const viaPrompt = await m.chat([{ role: 'system', content: system }, { role: 'user', content: 'What was Firefox originally named?' }]);
    const viaOption = await m.chat([{ role: 'system', content: system }, { role: 'user', content: 'What was Firefox originally named?' }], { knowledge: KNOWLEDGE });
    expect(viaPrompt.content).toBe(viaOption.content);
    expect(viaPrompt.content).toContain('Phoenix');
  });

  it('leaves citations out when the system prompt asks for none', async () => {
    const r = await model().chat([{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: 'What was Firefox originally named?' }], { knowledge: KNOWLEDGE });
    expect(r.content).toContain('Phoenix');
    expect(r.content).not.toMatch(/\[ID:/);
    // No system prompt at all: cited.
    expect((await model().chat([{ role: 'user', content: 'What was Firefox originally named?' }], { knowledge: KNOWLEDGE })).content).toMatch(/\[ID:0\]/);
  });

  it('a short follow-up with a pronoun borrows the terms of the previous question', async () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'Tell me about Thunderbird.' },
      { role: 'assistant', content: 'Thunderbird is an email client. [ID:1]' },
    ];
    const r = await model().chat(ask('Who develops it?', history), { knowledge: KNOWLEDGE });
    expect(r.content).toContain('developed by the volunteers of the Mozilla Community');
    expect(r.content).toMatch(/\[ID:1\]/);
  });

  it('streams the same content in several deltas; the last carries usage and finish_reason', async () => {
    const m = model();
    const q = ask('What was Firefox originally named, and when was the name chosen?');
    const full = await m.chat(q, { knowledge: KNOWLEDGE });
    const deltas = [];
    for await (const d of m.stream(q, { knowledge: KNOWLEDGE })) deltas.push(d);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.content).join('')).toBe(full.content);
    expect(deltas[deltas.length - 1]).toMatchObject({ finish_reason: 'stop', usage: full.usage });
    for (const d of deltas.slice(0, -1)) expect(d.finish_reason).toBeUndefined();
  });

  it('honours an abort signal, before the answer and between deltas', async () => {
    const m = model();
    const q = ask('What was Firefox originally named, and when was the name chosen?');
    const pre = new AbortController();
    pre.abort();
    await expect(m.chat(q, { knowledge: KNOWLEDGE, signal: pre.signal })).rejects.toMatchObject({ name: 'ChatModelError', kind: 'aborted' });
    await expect((async () => {
      for await (const _ of m.stream(q, { knowledge: KNOWLEDGE, signal: pre.signal })) void _;
    })()).rejects.toBeInstanceOf(ChatModelError);

    const ctl = new AbortController();
    const got: string[] = [];
    let error: unknown;
    try {
      for await (const d of m.stream(q, { knowledge: KNOWLEDGE, signal: ctl.signal })) {
        got.push(d.content ?? '');
        ctl.abort();
      }
    } catch (e) {
      error = e;
    }
    expect(got).toHaveLength(1);
    expect(error).toBeInstanceOf(ChatModelError);
    expect((error as ChatModelError).kind).toBe('aborted');
    // The embedder's work is honoured too: an abort during it ends the answer.
    const slow = new AbortController();
    const embed = async (t: string[]) => {
      slow.abort();
      return t.map((x) => Float32Array.from(hashedVector(x, 64)));
    };
    await expect(model({ embed }).chat(q, { knowledge: KNOWLEDGE, signal: slow.signal })).rejects.toMatchObject({ kind: 'aborted' });
  });

  it('fits max_tokens by leaving out the weakest sentences, and honours stop sequences', async () => {
    const m = model();
    const q = ask('What was Firefox originally named, and when was the name chosen?');
    const full = await m.chat(q, { knowledge: KNOWLEDGE });
    const short = await m.chat(q, { knowledge: KNOWLEDGE, max_tokens: 25 });
    expect(short.finish_reason).toBe('length');
    expect(short.usage.completion_tokens).toBeLessThanOrEqual(25);
    // What is left is whole sentences of the full answer, still cited.
    expect(short.content).toMatch(/\[ID:\d+\]$/);
    for (const piece of short.content.split(/ ?\[ID:\d+\]\s*/).filter(Boolean)) expect(full.content).toContain(piece.trim());
    const stopped = await m.chat(q, { knowledge: KNOWLEDGE, stop: ['Phoenix'] });
    expect(stopped.content).not.toContain('Phoenix');
    expect(full.content.startsWith(stopped.content)).toBe(true);
  });

  it("answers RAGFlow's internal prompts sensibly if a caller sends them anyway", async () => {
    const m = model();
    const refine = `## Task\nRewrite the user's latest question so that it can be understood without the conversation.\n\n## Conversation\nUSER: Tell me about Thunderbird.\nASSISTANT: It is an email client.\nUSER: Who develops it?`;
    expect((await m.chat([{ role: 'system', content: refine }, { role: 'user', content: 'Output: ' }])).content).toBe('Who develops it?');
    const kw = `## Task\nExtract the 3 most important keywords or phrases of the text below.\n\n## Text\nThunderbird email client, Thunderbird volunteers, email privacy.`;
    expect((await m.chat([{ role: 'system', content: kw }, { role: 'user', content: 'Output: ' }])).content).toBe('Thunderbird, email, client');
  });

  it('drops tables of contents and titles, keeps the sentence under the title', async () => {
    const knowledge: KnowledgeItem[] = [
      { id: 0, title: 'spec.txt', content: '3.6.4. Identification Fields . . . . . . . . 25\n3.6.5. Informational Fields . . . . . . . . 27' },
      { id: 1, title: 'spec.txt', content: 'Identification Fields\nEvery message SHOULD have a "Message-ID:" field.' },
    ];
    const r = await model().chat(ask('Which identification field should every message have?'), { knowledge });
    expect(r.content).toBe('Every message SHOULD have a "Message-ID:" field. [ID:1]');
  });
});

// ---------------------------------------------------------------------------------------------
// Usefulness on real documents: the real pipeline (parse, chunk, embed, hybrid retrieval, top 6),
// then the model; the fact must appear in the answer. The questions were written by reading the
// documents, before the model's answers were seen; parameters are general, not per question.
// ---------------------------------------------------------------------------------------------

const CORPUS = resolve(import.meta.dirname, '../../../shared/docs-corpus');
const HAVE_CORPUS = existsSync(CORPUS) && existsSync(join(CORPUS, 'wikipedia-mozilla.html'));

/** [document, question, a fact the answer must contain]. */
const QA: Array<[string, string, string]> = [
  ['wikipedia-mozilla.html', 'When was the name Firefox chosen?', 'February 9, 2004'],
  ['wikipedia-mozilla.html', 'What was Firefox originally named?', 'Phoenix'],
  ['wikipedia-mozilla.html', 'What is the codename of Firefox Mobile?', 'Fennec'],
  ['wikipedia-mozilla.html', "What was Mozilla's total revenue for 2011?", '$163 million'],
  ['wikipedia-mozilla.html', 'When did Brendan Eich step down as CEO of Mozilla?', 'April 3, 2014'],
  ['wikipedia-mozilla.html', 'In which language is the Rhino JavaScript engine developed?', 'entirely in Java'],
  ['wikipedia-mozilla.html', 'Who registered mozilla.org?', 'Jamie Zawinski'],
  ['wikipedia-mozilla.html', 'How many active contributors does the Mozilla Community have?', '40,000'],
  ['wikipedia-mozilla.html', 'When is Mozilla Persona shutting down?', 'November 30, 2016'],
  ['wikipedia-mozilla.html', 'What is Thunderbird?', 'email and news client'],
  ['wikipedia-mozilla.html', 'Who developed the SpiderMonkey engine?', 'Brendan Eich'],
  ['wikipedia-mozilla.html', 'What is Rust designed for?', 'safety, concurrency, and performance'],
  ['wikipedia-mozilla.html', 'Which web formats does Gecko support?', 'HTML, SVG, and MathML'],
  ['wikipedia-mozilla.html', "How much of Mozilla's revenue comes from its contract with Google?", '85%'],
  ['rfc5322.txt', 'What is the maximum number of characters in a line of a message?', '998'],
  ['rfc5322.txt', 'Which earlier specification does the Internet Message Format update?', 'RFC2822'],
  ['rfc5322.txt', 'How is unfolding accomplished?', 'removing any CRLF'],
  ['rfc5322.txt', 'Which notation is used for the formal definitions of the message syntax?', 'Augmented Backus-Naur Form'],
  ['rfc5322.txt', 'What range of character values may a conformant message contain?', '1 through 127'],
  ['rfc5322.txt', 'Which identification field should every message have?', 'Message-ID'],
  ['rfc5322.txt', 'What must the msg-id be?', 'globally unique identifier'],
  ['rfc5322.txt', 'What will the In-Reply-To field contain?', 'message to which this one is a reply'],
  ['rfc5322.txt', 'Which character was once allowed but is no longer allowed for compatibility reasons?', 'NUL character'],
  ['rfc5322.txt', 'Are the informational fields required?', 'informational fields are all optional'],
  ['us-trustee-handbook-872p.docx', 'For how long may the trustee adjourn the meeting of creditors so that the debtor can file unfiled tax returns?', '120 days'],
  ['us-trustee-handbook-872p.docx', 'What is the statutory maximum term of a chapter 13 plan?', 'five years'],
  ['us-trustee-handbook-872p.docx', 'What identification must each debtor present at the meeting of creditors?', 'photo identification'],
  ['us-trustee-handbook-872p.docx', 'When should the trustee send the first notices to domestic support obligation claim holders?', 'three business days'],
  ['us-trustee-handbook-872p.docx', 'Which background checks must standing trustees undergo?', 'five-year background checks'],
  ['us-trustee-handbook-872p.docx', "Which digits of the debtor's Social Security number must be redacted when the notice is filed with the court?", 'first five digits'],
  ['us-trustee-handbook-872p.docx', 'Must the debtor attend the meeting of creditors if no creditors attend?', 'even if no creditors attend'],
  ['us-trustee-handbook-872p.docx', 'Which forms of picture identification are acceptable?', "driver's license"],
  ['us-trustee-handbook-872p.docx', 'Who is the presiding officer at the meeting of creditors?', 'as designee of the United States Trustee'],
  ['us-trustee-handbook-872p.docx', 'Must the standing trustee review the certificate of credit counseling?', 'must review the certificate of credit counseling'],
  ['us-trustee-handbook-872p.docx', 'What is acceptable proof of a social security number?', 'social security card'],
  ['us-trustee-handbook-872p.docx', 'May the standing trustee set a minimum or maximum fee for chapter 13 cases?', 'should not informally establish a minimum or maximum fee'],
  ['federal-register-2020-17221.pdf', 'By what date must the FAA receive comments on the proposed AD?', 'September 21, 2020'],
  ['federal-register-2020-17221.pdf', 'How many fatalities resulted from the Lion Air Flight 610 accident?', '189 fatalities'],
  ['federal-register-2020-17221.pdf', 'How many people died in the Ethiopian Airlines Flight 302 accident?', '157 fatalities'],
  ['federal-register-2020-17221.pdf', 'What is the angle of attack?', 'the angle at which the airplane wing meets the oncoming air'],
  ['federal-register-2020-17221.pdf', 'How many design changes does the FAA propose to address the unsafe condition?', 'four design changes'],
  ['federal-register-2020-17221.pdf', 'How many airplanes of U.S. registry does the proposed AD affect?', '73 airplanes'],
  ['federal-register-2020-17221.pdf', 'What labor rate per work-hour does the FAA use to estimate costs?', '$85 per hour'],
  ['federal-register-2020-17221.pdf', 'When would the Stabilizer Out of Trim checklist be used?', 'when the autopilot does not set the horizontal stabilizer trim correctly'],
  ['federal-register-2020-17221.pdf', 'With which civil aviation authorities will the FAA conduct the operational evaluation?', 'Transport Canada'],
  ['awesome-readme.md', 'What is Raspberry Pi?', 'Credit card-sized computer'],
  ['awesome-readme.md', 'What is IPFS?', 'P2P hypermedia protocol'],
  ['awesome-readme.md', 'What is Heroku?', 'Cloud platform as a service'],
  ['awesome-readme.md', 'What is Node.js?', 'Async non-blocking event-driven JavaScript runtime'],
  ['awesome-readme.md', 'What does Kubernetes automate?', 'Linux container operations'],
  ['country-codes.csv', 'What is the capital of Kenya?', 'Nairobi'],
  ['country-codes.csv', 'What currency is used in Japan?', 'Yen'],
  ['country-codes.csv', 'What is the capital of Brazil?', 'Brasilia'],
  ['country-codes.csv', 'What is the internet top-level domain of Japan?', '.jp'],
  ['country-codes.csv', 'What is the ISO 4217 alphabetic currency code of Brazil?', 'BRL'],
  ['nics-background-checks-2015-11.pdf', 'How many permit checks were there in Hawaii?', '1,248'],
  ['nics-background-checks-2015-11.pdf', 'What is the total number of firearm background checks for Idaho?', '11,925'],
  ['nics-background-checks-2015-11.pdf', 'Do the NICS statistics represent the number of firearms sold?', 'do not represent the number of firearms sold'],
  ['nics-background-checks-2015-11.pdf', 'How many handgun checks were there in Puerto Rico?', 'Handgun: 1,033'],
  ['sec-10k-excerpt.html', 'How many common shares were outstanding as of March 28, 2022?', '23,718,968'],
  ['sec-10k-excerpt.html', 'What was the aggregate market value of the common equity held by non-affiliates?', '$70,923,698'],
  ['sec-10k-excerpt.html', "What is the trading symbol of Galaxy Gaming's common stock?", 'GLXZ'],
  ['sec-10k-excerpt.html', "Where are Galaxy Gaming's principal executive offices?", '6480 Cameron Street'],
  ['sec-10k-excerpt.html', "What is Galaxy Gaming's Commission file number?", '000-30653'],
  ['aws-newsletter.eml', 'When does the AWS Innovate online conference take place?', 'October 06, 2022'],
  ['aws-newsletter.eml', 'What is the street address of Amazon Web Services in Seattle?', '410 Terry Ave'],
  ['reply-with-inline-image.eml', 'Which list does the sender offer to send to exhibitors?', 'Attendee'],
  ['vodafone-kpis.xlsx', 'On which page are the mobile churn figures?', 'Mobile churn; Nine quarters to 30 June 2023; 11'],
  ['huckfinn-c02-22-scanned.pdf', 'Where was Jim sitting when they passed by the kitchen?', 'kitchen door'],
];

/** Questions the corpus does not answer: the model should say so rather than quote something. */
const UNANSWERABLE = [
  'What is the boiling point of mercury?',
  'Who won the 2018 FIFA World Cup?',
  'How do I bake sourdough bread?',
  'What is the population of Tokyo?',
  'Which vaccine protects against measles?',
  'What is the speed of light in vacuum?',
  'Who painted the Mona Lisa?',
  'What is the recommended dose of ibuprofen for adults?',
  'How tall is Mount Everest?',
  'What is the airspeed velocity of an unladen swallow?',
];

const norm = (s: string) => s.replace(/\s+/g, ' ').toLowerCase();

describe('usefulness on real documents', () => {
  test.skipIf(!HAVE_CORPUS)(
    `answers ≥ 85% of ${QA.length} questions over the docs corpus (skipped when ${CORPUS} is absent)`,
    async () => {
      // Imported here so that the unit tests above run even when the rest of the package cannot load.
      const { Client } = await import('../../src/index.js');
      const { ModelRegistry, DEFAULT_EMBEDDING_MODEL } = await import('../../src/embed/index.js');
      const dir = await mkdtemp(join(tmpdir(), 'ragloom-extractive-'));
      const client = new Client({ path: join(dir, 'kb.db') });
      const registry = new ModelRegistry();
      const embedder = registry.embedder(DEFAULT_EMBEDDING_MODEL);
      try {
        const ds = await client.createDataset({ name: 'corpus', embedding_model: DEFAULT_EMBEDDING_MODEL });
        const files = readdirSync(CORPUS).filter((f) => f !== 'MANIFEST.md').sort();
        expect(files.length).toBeGreaterThanOrEqual(15);
        const docs = await ds.uploadDocuments(files.map((f) => ({ display_name: f, blob: new Uint8Array(readFileSync(join(CORPUS, f))) })));
        const parsed = await ds.parseDocuments(docs.map((d) => d.id));
        const withText = parsed.filter((p) => p[1] === 'DONE' && p[2] > 0).length;
        // Every document the questions name was parsed into chunks.
        expect(withText).toBeGreaterThanOrEqual(new Set(QA.map((q) => q[0])).size);

        // As a chat builds it (src/core/chat-models.ts): with the shipped related-word tables.
        const m = new ExtractiveChatModel({ analyze, splitSentences, countTokens, embed: (t) => embedder.embed(t), related: wordnetRelatedTerms() });
        const retrieve = async (question: string): Promise<KnowledgeItem[]> => {
          const hits = await client.retrieve({ question, dataset_ids: [ds.id], page_size: 6, similarity_threshold: 0.2, vector_similarity_weight: 0.3 });
          return hits.slice(0, 6).map((h, id) => ({ id, title: String((h as unknown as Record<string, unknown>).document_name ?? ''), content: String(h.content ?? '') }));
        };
        const system = (k: KnowledgeItem[]) =>
          `Answer from the knowledge base.\n${k.map((x) => `\nID: ${x.id}\n├── Title: ${x.title}\n└── Content:\n${x.content}`).join('\n\n------\n\n')}\n\n# Citations\n- Cite with [ID:i].`;

        // Load the embedding model before timing answers.
        await m.chat([{ role: 'user', content: 'warm up' }], { knowledge: await retrieve('warm up') });
        let answered = 0;
        let retrieved = 0;
        let answeredRetrieved = 0;
        const times: number[] = [];
        const misses: string[] = [];
        for (const [doc, question, fact] of QA) {
          const knowledge = await retrieve(question);
          const opts: ChatOptions = { knowledge, empty_response: 'EMPTY' };
          const t0 = performance.now();
          const r = await m.chat([{ role: 'system', content: system(knowledge) }, { role: 'user', content: question }], opts);
          times.push(performance.now() - t0);
          for (const id of r.content.matchAll(/\[ID:(\d+)\]/g)) expect(Number(id[1])).toBeLessThan(knowledge.length);
          const inKnowledge = knowledge.some((k) => norm(k.content).includes(norm(fact)));
          const ok = norm(r.content).includes(norm(fact));
          answered += +ok;
          retrieved += +inKnowledge;
          answeredRetrieved += +(ok && inKnowledge);
          if (!ok) misses.push(`${inKnowledge ? 'model' : 'retrieval'}: [${doc}] ${question} → ${fact}`);
        }
        let abstained = 0;
        for (const question of UNANSWERABLE) {
          const knowledge = await retrieve(question);
          const r = await m.chat([{ role: 'system', content: system(knowledge) }, { role: 'user', content: question }], { knowledge, empty_response: 'EMPTY' });
          abstained += +(r.content === 'EMPTY');
        }
        const fraction = answered / QA.length;
        const mean = times.reduce((a, b) => a + b, 0) / times.length;
        const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
        const given = answeredRetrieved / Math.max(1, retrieved);
        console.log(
          `extractive usefulness: fact in answer ${answered}/${QA.length} = ${fraction.toFixed(3)}; ` +
            `fact retrieved in top 6 ${retrieved}/${QA.length}, answered of those ${answeredRetrieved}/${retrieved} = ${given.toFixed(3)}; ` +
            `unanswerable questions declined ${abstained}/${UNANSWERABLE.length}; ${mean.toFixed(1)} ms per answer on 6 chunks (median ${median.toFixed(1)})` +
            (misses.length ? `\n  misses:\n  - ${misses.join('\n  - ')}` : ''),
        );
        expect(fraction).toBeGreaterThanOrEqual(0.85);
        expect(given).toBeGreaterThanOrEqual(0.9);
        // The model declines only when no sentence is supported (issue 31): 5 of these 10 since, 6 before.
        expect(abstained / UNANSWERABLE.length).toBeGreaterThanOrEqual(0.5);
        expect(median).toBeLessThan(150);
      } finally {
        await client.close();
        await embedder.close?.();
        await rm(dir, { recursive: true, force: true });
      }
    },
    300_000,
  );
});
