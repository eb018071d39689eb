import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { splitSentences } from '../../src/text/index.js';
import { ChatModelError, ExtractiveChatModel, OpenAIChatModel, type ChatMessage, type ChatModel, type ChatOptions, type ChatResult } from '../../src/llm/index.js';
import {
  canExtract,
  extract,
  extractedTypes,
  extractionSystemPrompt,
  extractionUserPrompt,
  fillUserPrompt,
  isDefaultSystemPrompt,
  isoLocal,
  maskToTypes,
  MEMORY_TYPE_FLAGS,
  MEMORY_TYPES,
  parseExtraction,
  parseIsoTime,
  rawMessageContent,
  typesToMask,
  type ExtractedItem,
} from '../../src/memory/extract.js';
import { startChatServer, type ChatServer } from '../support/chat-server.js';

const NOW = Date.UTC(2025, 2, 10, 8, 30, 0); // 2025-03-10T08:30:00Z
const ALL = ['semantic', 'episodic', 'procedural'];
const parse = (text: string, types: string[] = ALL, maxItemsPerType?: number) => parseExtraction(text, types, { now: NOW, maxItemsPerType });
const contents = (items: ExtractedItem[]) => items.map((i) => `${i.type}:${i.content}`);
/** Local wall-clock time as epoch ms (zone-less timestamps are local). */
const local = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) => new Date(y, mo - 1, d, h, mi, s, ms).getTime();

describe('memory types and bit flags', () => {
  it("RAGFlow's flags: raw 1, semantic 2, episodic 4, procedural 8", () => {
    expect(MEMORY_TYPES).toEqual(['raw', 'semantic', 'episodic', 'procedural']);
    expect(MEMORY_TYPE_FLAGS).toEqual({ raw: 1, semantic: 2, episodic: 4, procedural: 8 });
    expect(typesToMask(['raw'])).toBe(1);
    expect(typesToMask(['procedural', 'raw', 'semantic', 'semantic'])).toBe(11);
    expect(typesToMask(['raw', 'semantic', 'episodic', 'procedural'])).toBe(15);
    expect(typesToMask(['something', 'Semantic'])).toBe(0); // unknown names ignored, as calculate_memory_type does
    expect(typesToMask([])).toBe(0);
  });

  it('maskToTypes lists names in flag order and ignores unknown bits', () => {
    expect(maskToTypes(11)).toEqual(['raw', 'semantic', 'procedural']);
    expect(maskToTypes(15)).toEqual([...MEMORY_TYPES]);
    expect(maskToTypes(0)).toEqual([]);
    expect(maskToTypes(16 | 4)).toEqual(['episodic']);
    expect(maskToTypes(1.5)).toEqual([]);
    for (let m = 0; m < 16; m++) expect(typesToMask(maskToTypes(m))).toBe(m);
  });

  it('extractedTypes drops raw and unknown names, dedupes, orders canonically', () => {
    expect(extractedTypes(['procedural', 'raw', 'semantic', 'procedural', 'x'])).toEqual(['semantic', 'procedural']);
    expect(extractedTypes(['raw'])).toEqual([]);
  });

  it('rawMessageContent is RAGFlow\'s raw message', () => {
    expect(rawMessageContent('hi', 'hello')).toBe('User Input: hi\nAgent Response: hello');
  });

  it('canExtract: false only for a model declaring rewrite === false (the built-in extractive model)', () => {
    expect(canExtract(new ExtractiveChatModel({ analyze: (t) => t.toLowerCase().split(/\W+/), splitSentences }))).toBe(false);
    expect(canExtract(new OpenAIChatModel({ id: 'm@OpenAI', model: 'm', baseUrl: 'http://127.0.0.1:9/v1' }))).toBe(true);
    expect(canExtract({ id: 'a@X', capabilities: { rewrite: true, tools: false } })).toBe(true);
    expect(canExtract({ id: 'b@X', capabilities: { keywords: false } })).toBe(true);
    expect(canExtract({ id: 'c@X' })).toBe(true);
  });
});

describe('extraction prompts', () => {
  const sections = { semantic: '## Kind "semantic"', episodic: '## Kind "episodic"', procedural: '## Kind "procedural"' };
  const formats = { semantic: '"semantic": [', episodic: '"episodic": [', procedural: '"procedural": [' };

  it.each([
    [['semantic']],
    [['episodic']],
    [['procedural']],
    [['raw', 'semantic', 'episodic']],
    [['episodic', 'procedural']],
    [ALL],
  ])('the system prompt for %j holds exactly those sections, the rules and the JSON format', (types) => {
    const p = extractionSystemPrompt(types);
    const wanted = extractedTypes(types);
    for (const t of ['semantic', 'episodic', 'procedural'] as const) {
      const has = wanted.includes(t);
      expect(p.includes(sections[t]), `${t} section`).toBe(has);
      expect(p.includes(formats[t]), `${t} format`).toBe(has);
      expect(p.includes(`{"${t}":[{"content"`), `${t} example`).toBe(has);
    }
    expect(p).not.toMatch(/\braw\b/);
    expect(p).toContain('valid JSON object');
    expect(p).toContain('"content", "valid_at" and "invalid_at"');
    expect(p).toContain('ISO 8601');
    expect(p).toContain('At most 5 items per kind');
    // Sections and formats in canonical order.
    const at = (s: string) => p.indexOf(s);
    const order = wanted.map((t) => at(sections[t]));
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const fmt = wanted.map((t) => at(formats[t]));
    expect([...fmt].sort((a, b) => a - b)).toEqual(fmt);
    // The format block is valid JSON once the placeholders are read as strings.
    const block = /```json\n([\s\S]*?)\n```/.exec(p)![1]!;
    expect(Object.keys(JSON.parse(block))).toEqual(wanted);
  });

  it('is a pure function of the set of types: order and repetition do not matter; a change of types changes it', () => {
    const a = extractionSystemPrompt(['semantic', 'episodic']);
    expect(extractionSystemPrompt(['episodic', 'semantic', 'raw', 'episodic'])).toBe(a);
    expect(extractionSystemPrompt(new Set(['raw', 'episodic', 'semantic']))).toBe(a);
    expect(extractionSystemPrompt(['semantic'])).not.toBe(a);
    expect(extractionSystemPrompt(['semantic', 'episodic', 'procedural'])).not.toBe(a);
    expect(isDefaultSystemPrompt(a, ['episodic', 'semantic'])).toBe(true);
    expect(isDefaultSystemPrompt(a, ['semantic'])).toBe(false);
    expect(isDefaultSystemPrompt('You extract facts.', ['semantic'])).toBe(false);
  });

  it('maxItemsPerType shows in the rules (invalid values fall back to 5)', () => {
    expect(extractionSystemPrompt(['semantic'], { maxItemsPerType: 3 })).toContain('At most 3 items per kind');
    expect(extractionSystemPrompt(['semantic'], { maxItemsPerType: 0 })).toBe(extractionSystemPrompt(['semantic']));
    expect(extractionSystemPrompt(['semantic'], { maxItemsPerType: Number.NaN })).toBe(extractionSystemPrompt(['semantic']));
  });

  it('raw only: the base instructions with an empty format and no kind sections', () => {
    const p = extractionSystemPrompt(['raw']);
    expect(p).not.toContain('## Kind');
    expect(p).toContain('```json\n{\n}\n```');
    expect(p).not.toContain('## Examples');
  });

  it("the user prompt follows RAGFlow's layout with ISO 8601 local times", () => {
    const t = local(2025, 3, 9, 14, 5, 6);
    const u = extractionUserPrompt('User Input: a\nAgent Response: b', t, new Date(NOW));
    expect(u).toBe(`**CONVERSATION:**\nUser Input: a\nAgent Response: b\n\n**CONVERSATION TIME:** ${isoLocal(t)}\n**CURRENT TIME:** ${isoLocal(NOW)}`);
    expect(isoLocal(t)).toMatch(/^2025-03-09T14:05:06[+-]\d{2}:\d{2}$/);
    expect(parseIsoTime(isoLocal(NOW))).toBe(NOW);
    expect(() => extractionUserPrompt('x', Number.NaN, NOW)).toThrow(TypeError);
    expect(() => extractionUserPrompt('x', NOW, new Date('nope'))).toThrow(TypeError);
  });

  it('a custom user prompt: placeholders filled once; without {conversation} the conversation block is appended', () => {
    const conv = 'User Input: say {current_time}\nAgent Response: ok';
    const filled = fillUserPrompt('Extract from {conversation} (at {conversation_time}, now {current_time}) {other}', conv, NOW, NOW);
    expect(filled).toBe(`Extract from ${conv} (at ${isoLocal(NOW)}, now ${isoLocal(NOW)}) {other}`);
    const bare = fillUserPrompt('Only facts about cooking.', conv, NOW, NOW);
    expect(bare).toBe(`Only facts about cooking.\n\n${extractionUserPrompt(conv, NOW, NOW)}`);
  });
});

describe('parseExtraction', () => {
  const answer = {
    semantic: [{ content: 'Paris is the capital of France', valid_at: '2025-03-10T09:30:00+01:00', invalid_at: '' }],
    episodic: [{ content: 'The user visited Paris', valid_at: '2025-03-01', invalid_at: '2025-03-05' }],
    procedural: [{ content: 'To book: open the app, pick a date', valid_at: '', invalid_at: null }],
  };
  const expected: ExtractedItem[] = [
    { type: 'semantic', content: 'Paris is the capital of France', valid_at: Date.UTC(2025, 2, 10, 8, 30), invalid_at: null },
    { type: 'episodic', content: 'The user visited Paris', valid_at: local(2025, 3, 1), invalid_at: local(2025, 3, 5) },
    { type: 'procedural', content: 'To book: open the app, pick a date', valid_at: NOW, invalid_at: null },
  ];
  const json = JSON.stringify(answer);

  it('bare JSON', () => {
    expect(parse(json)).toEqual({ items: expected });
  });

  it('fenced JSON (```json and bare ```), with whitespace around', () => {
    expect(parse(`\n\`\`\`json\n${JSON.stringify(answer, null, 2)}\n\`\`\`\n`)).toEqual({ items: expected });
    expect(parse(`\`\`\`\n${json}\n\`\`\``)).toEqual({ items: expected });
    expect(parse(`\`\`\`JSON\n${json}`)).toEqual({ items: expected }); // closing fence cut off
  });

  it('prose around the object, including braces and brackets in the prose', () => {
    expect(parse(`Here is what I found [1]: ${json}\nHope this helps {:}`)).toEqual({ items: expected });
    expect(parse(`Sure! {not json} and then:\n\`\`\`json\n${json}\n\`\`\`\nDone.`).items).toEqual(expected);
  });

  it('braces, brackets and fences inside strings are kept', () => {
    const content = 'Run ```npm test``` then check {"ok": true} and [done]';
    const r = parse(`Answer: {"procedural": [{"content": ${JSON.stringify(content)}, "valid_at": "", "invalid_at": ""}]} trailing`);
    expect(r).toEqual({ items: [{ type: 'procedural', content, valid_at: NOW, invalid_at: null }] });
  });

  it('a <think> block before the answer (also with only its closing tag)', () => {
    expect(parse(`<think>The user said {something}. I'll output {"semantic": []}</think>\n${json}`)).toEqual({ items: expected });
    expect(parse(`I should list the facts {x}.</think>\n\n\`\`\`json\n${json}\n\`\`\``)).toEqual({ items: expected });
    const r = parse(`<think>still thinking ${json}`);
    expect(r.items).toEqual([]);
    expect(r.error).toMatch(/<think>/);
  });

  it.each([
    ['truncated', json.slice(0, json.length - 20), /not closed/],
    ['trailing commas', '{"semantic": [{"content": "a", "valid_at": "", "invalid_at": "",},],}', /not valid JSON/],
    ['single quotes', "{'semantic': [{'content': 'a', 'valid_at': '', 'invalid_at': ''}]}", /not valid JSON/],
    ['unquoted keys', '{semantic: [{content: "a"}]}', /not valid JSON/],
    ['fenced and truncated', '```json\n{"semantic": [{"content": "a"', /not closed/],
    ['no JSON at all', 'I could not find anything worth remembering.', /no JSON object/],
    ['empty', '   ', /empty/],
    ['a JSON string', '"semantic"', /string, not a JSON object/],
    ['null', 'null', /null, not a JSON object/],
    ['an array', JSON.stringify([{ content: 'a', valid_at: '', invalid_at: '' }]), /array, not a JSON object/],
    ['an array in prose', `Here: ${JSON.stringify(answer.semantic)}`, /array, not a JSON object/],
  ])('malformed: %s → no items and an error, no throw', (_name, text, error) => {
    let r: ReturnType<typeof parse> | undefined;
    expect(() => (r = parse(text))).not.toThrow();
    expect(r!.items).toEqual([]);
    expect(r!.error).toMatch(error);
  });

  it('never throws on non-string input', () => {
    expect(parseExtraction(undefined as unknown as string, ALL, { now: NOW })).toMatchObject({ items: [], error: expect.any(String) });
  });

  it('wrong shapes inside the object: non-object items, non-string or blank content are dropped; a single item object is accepted', () => {
    const r = parse(
      JSON.stringify({
        semantic: ['a bare string', 42, null, [], { content: 7 }, { content: ['x'] }, { content: '   ' }, { valid_at: '2025-01-01' }, { content: ' kept ' }],
        episodic: 'not a list',
        procedural: { content: 'one object', valid_at: '2025-01-02', invalid_at: '' },
      }),
    );
    expect(r.error).toBeUndefined();
    expect(r.items).toEqual([
      { type: 'semantic', content: 'kept', valid_at: NOW, invalid_at: null },
      { type: 'procedural', content: 'one object', valid_at: local(2025, 1, 2), invalid_at: null },
    ]);
  });

  it('numbers as content are dropped; an object with no wanted key gives nothing and no error', () => {
    expect(parse('{"semantic": [{"content": 12345}]}')).toEqual({ items: [] });
    expect(parse('{}')).toEqual({ items: [] });
    expect(parse('{"facts": [{"content": "x"}]}')).toEqual({ items: [] });
  });

  it('only requested types are read; unknown keys are ignored', () => {
    const r = parse(JSON.stringify({ ...answer, raw: [{ content: 'raw!' }], opinions: [{ content: 'x' }], summary: 'y' }), ['raw', 'episodic']);
    expect(r).toEqual({ items: [expected[1]] });
    const s = parse(JSON.stringify({ semantic: [{ content: 'f', valid_at: '', invalid_at: '', confidence: 0.9, tags: ['a'] }] }), ['semantic']);
    expect(s.items).toEqual([{ type: 'semantic', content: 'f', valid_at: NOW, invalid_at: null }]);
    expect(parse(json, ['raw'])).toEqual({ items: [] });
  });

  it('at most maxItemsPerType per type (after dropping invalid items and duplicates), in answer order', () => {
    const many = Array.from({ length: 9 }, (_, i) => ({ content: `fact ${i}`, valid_at: '', invalid_at: '' }));
    const list = [{ content: '' }, many[0], { content: ' fact 0 ' }, ...many.slice(1)];
    const r = parse(JSON.stringify({ semantic: list, episodic: many }));
    expect(contents(r.items)).toEqual([
      ...['fact 0', 'fact 1', 'fact 2', 'fact 3', 'fact 4'].map((c) => `semantic:${c}`),
      ...['fact 0', 'fact 1', 'fact 2', 'fact 3', 'fact 4'].map((c) => `episodic:${c}`),
    ]);
    expect(parse(JSON.stringify({ semantic: many }), ['semantic'], 2).items).toHaveLength(2);
  });

  it('identical contents are kept once per type (not across types)', () => {
    const item = { content: 'The meeting is on Monday', valid_at: '', invalid_at: '' };
    const r = parse(JSON.stringify({ semantic: [item, { ...item, content: 'The meeting is on Monday  ' }], episodic: [item, item] }));
    expect(contents(r.items)).toEqual(['semantic:The meeting is on Monday', 'episodic:The meeting is on Monday']);
  });

  it('result order is semantic, episodic, procedural whatever the key order', () => {
    const r = parse(JSON.stringify({ procedural: answer.procedural, episodic: answer.episodic, semantic: answer.semantic }));
    expect(r.items.map((i) => i.type)).toEqual(['semantic', 'episodic', 'procedural']);
  });

  it.each([
    ['2025-03-10T09:30:00Z', Date.UTC(2025, 2, 10, 9, 30)],
    ['2025-03-10T09:30:00z', Date.UTC(2025, 2, 10, 9, 30)],
    ['2025-03-10T09:30:00.123Z', Date.UTC(2025, 2, 10, 9, 30, 0, 123)],
    ['2025-03-10T09:30:00.123456+00:00', Date.UTC(2025, 2, 10, 9, 30, 0, 123)],
    ['2025-03-10T09:30:00+01:00', Date.UTC(2025, 2, 10, 8, 30)],
    ['2025-03-10T09:30:00-0530', Date.UTC(2025, 2, 10, 15, 0)],
    ['2025-03-10T09:30+02', Date.UTC(2025, 2, 10, 7, 30)],
    ['20250310T093000Z', Date.UTC(2025, 2, 10, 9, 30)],
    ['2025-03-10T24:00:00Z', Date.UTC(2025, 2, 11)],
    ['2025-03-10T09:30:00', local(2025, 3, 10, 9, 30)],
    ['2025-03-10 09:30:00', local(2025, 3, 10, 9, 30)],
    ['2025-03-10T09:30', local(2025, 3, 10, 9, 30)],
    ['2025-03-10', local(2025, 3, 10)],
    ['  2024-02-29  ', local(2024, 2, 29)],
    ['20250310', local(2025, 3, 10)],
    ['0099-01-01T00:00:00Z', new Date('0099-01-01T00:00:00Z').getTime()],
  ])('timestamp %j is read', (ts, ms) => {
    expect(parseIsoTime(ts)).toBe(ms);
    const r = parse(JSON.stringify({ episodic: [{ content: 'e', valid_at: ts, invalid_at: ts }] }), ['episodic']);
    expect(r.items).toEqual([{ type: 'episodic', content: 'e', valid_at: ms, invalid_at: ms }]);
  });

  it.each([
    [''],
    ['   '],
    ['yesterday'],
    ['N/A'],
    ['null'],
    ['2025-13-01'],
    ['2025-02-29'],
    ['2025-04-31T10:00:00'],
    ['2025-03-10T25:00:00'],
    ['2025-03-10T10:60:00'],
    ['2025-03-10T24:30:00'],
    ['2025-03-10T10:00:00+25:00'],
    ['10/03/2025'],
    ['March 10, 2025'],
    ['2025-3-10'],
    ['1741595400'],
    [1741595400000],
    [null],
    [true],
    [{ date: '2025-03-10' }],
  ])('timestamp %j is not: valid_at becomes now, invalid_at null', (ts) => {
    expect(parseIsoTime(ts)).toBeUndefined();
    const r = parse(JSON.stringify({ semantic: [{ content: 's', valid_at: ts, invalid_at: ts }] }), ['semantic']);
    expect(r.items).toEqual([{ type: 'semantic', content: 's', valid_at: NOW, invalid_at: null }]);
  });

  it('missing timestamps: valid_at now, invalid_at null', () => {
    expect(parse('{"semantic": [{"content": "s"}]}').items).toEqual([{ type: 'semantic', content: 's', valid_at: NOW, invalid_at: null }]);
  });
});

describe('extract() with an OpenAI-compatible server', () => {
  let server: ChatServer;
  beforeAll(async () => {
    server = await startChatServer();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  const model = (retries = 0) => new OpenAIChatModel({ id: 'mock@OpenAI', model: 'mock', baseUrl: server.url, retries, retryBaseMs: 1 });
  const T = local(2025, 3, 9, 18, 0);
  const base = {
    types: ['raw', 'semantic', 'episodic'],
    userInput: 'I moved to Lyon last month. Lyon is in France.',
    agentResponse: 'Welcome to Lyon!',
    conversationTime: T,
    now: NOW,
    temperature: 0.3,
  };

  it('sends the system and user prompts, the temperature and JSON mode, and reads the answer', async () => {
    server.script({
      text: '```json\n{"semantic": [{"content": "Lyon is in France", "valid_at": "", "invalid_at": ""}], "episodic": [{"content": "The user moved to Lyon", "valid_at": "2025-02-01", "invalid_at": ""}], "procedural": [{"content": "not asked"}]}\n```',
    });
    const out = await extract(model(), base);
    expect(out.error).toBeUndefined();
    expect(out.items).toEqual([
      { type: 'semantic', content: 'Lyon is in France', valid_at: NOW, invalid_at: null },
      { type: 'episodic', content: 'The user moved to Lyon', valid_at: local(2025, 2, 1), invalid_at: null },
    ]);
    expect(out.raw).toMatch(/^```json\n\{"semantic"/);
    expect(server.requests).toHaveLength(1);
    const body = server.requests[0]!.body;
    expect(body.temperature).toBe(0.3);
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.stream).toBe(false);
    expect(body.messages).toEqual([
      { role: 'system', content: extractionSystemPrompt(['semantic', 'episodic']) },
      { role: 'user', content: extractionUserPrompt(rawMessageContent(base.userInput, base.agentResponse), T, NOW) },
    ]);
    const user = body.messages[1]!.content as string;
    expect(user).toContain('**CONVERSATION:**\nUser Input: I moved to Lyon last month. Lyon is in France.\nAgent Response: Welcome to Lyon!');
    expect(user).toContain(`**CONVERSATION TIME:** ${isoLocal(T)}`);
    expect(user).toContain(`**CURRENT TIME:** ${isoLocal(NOW)}`);
  });

  it("a memory's custom system and user prompts replace the defaults", async () => {
    server.script({ text: '{"semantic": [{"content": "x"}]}' });
    const out = await extract(model(), {
      ...base,
      temperature: 0,
      systemPrompt: 'Extract facts about cities as JSON.',
      userPrompt: 'Conversation:\n{conversation}\nTime: {conversation_time}',
    });
    expect(out.items).toEqual([{ type: 'semantic', content: 'x', valid_at: NOW, invalid_at: null }]);
    const body = server.requests[0]!.body;
    expect(body.temperature).toBe(0);
    expect(body.messages).toEqual([
      { role: 'system', content: 'Extract facts about cities as JSON.' },
      { role: 'user', content: `Conversation:\n${rawMessageContent(base.userInput, base.agentResponse)}\nTime: ${isoLocal(T)}` },
    ]);
  });

  it('custom prompts that never mention JSON get a line asking for it (JSON mode requires it)', async () => {
    server.script({ text: '{}' });
    await extract(model(), { ...base, systemPrompt: 'Remember what matters.' });
    const user = server.requests[0]!.body.messages[1]!.content as string;
    expect(user.endsWith('\n\nAnswer with one JSON object.')).toBe(true);
  });

  it('an unreadable answer resolves with no items, the error and the raw text', async () => {
    server.script({ text: "{'semantic': [{'content': 'a'}]}" });
    const out = await extract(model(), base);
    expect(out.items).toEqual([]);
    expect(out.error).toMatch(/not valid JSON/);
    expect(out.raw).toBe("{'semantic': [{'content': 'a'}]}");
  });

  it("the server's default JSON answer (no wanted keys) gives nothing, without error", async () => {
    const out = await extract(model(), base);
    expect(out).toEqual({ items: [], raw: expect.stringContaining('"answer"') });
  });

  it('a 500 from the server propagates as ChatModelError', async () => {
    server.script({ status: 500, body: { error: { message: 'boom', type: 'server_error' } } });
    const err = await extract(model(), base).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChatModelError);
    expect((err as ChatModelError).kind).toBe('http');
    expect((err as ChatModelError).status).toBe(500);
    expect((err as ChatModelError).message).toContain('boom');
  });

  it('an abort signal reaches the request', async () => {
    server.script({ hang: true });
    const ctl = new AbortController();
    const p = extract(model(), { ...base, signal: ctl.signal });
    setTimeout(() => ctl.abort(), 50);
    await expect(p).rejects.toMatchObject({ name: 'ChatModelError', kind: 'aborted' });
  });

  it('raw-only memories and models that cannot extract are not asked', async () => {
    expect(await extract(model(), { ...base, types: ['raw'] })).toEqual({ items: [], raw: '' });
    const extractive = new ExtractiveChatModel({ analyze: (t) => t.toLowerCase().split(/\W+/), splitSentences });
    const out = await extract(extractive, base);
    expect(out.items).toEqual([]);
    expect(out.error).toMatch(/cannot extract/);
    expect(server.requests).toHaveLength(0);
  });

  it('works with any ChatModel (options as given)', async () => {
    const seen: { messages: ChatMessage[]; options?: ChatOptions }[] = [];
    const fake: ChatModel = {
      id: 'fake@Test',
      maxTokens: 8192,
      async chat(messages, options): Promise<ChatResult> {
        seen.push({ messages, options });
        return { content: '<think>hmm</think>{"episodic": [{"content": "e", "valid_at": "2025-03-09T17:00:00Z"}]}', usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, finish_reason: 'stop' };
      },
      stream() {
        throw new Error('not used');
      },
    };
    const out = await extract(fake, { ...base, types: ['episodic'], maxItemsPerType: 1 });
    expect(out.items).toEqual([{ type: 'episodic', content: 'e', valid_at: Date.UTC(2025, 2, 9, 17), invalid_at: null }]);
    expect(seen[0]!.options).toEqual({ temperature: 0.3, json: true, signal: undefined });
    expect(seen[0]!.messages[0]!.content).toBe(extractionSystemPrompt(['episodic'], { maxItemsPerType: 1 }));
  });
});
