import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChatModelError, OpenAIChatModel, type ChatDelta, type ChatMessage, type ToolSpec } from '../../src/llm/index.js';
import { defaultAnswer, startChatServer, type ChatServer } from '../support/chat-server.js';

let server: ChatServer;
beforeAll(async () => {
  server = await startChatServer({ apiKey: 'sk-test' });
});
afterAll(() => server.close());
beforeEach(() => server.reset());

type Options = ConstructorParameters<typeof OpenAIChatModel>[0];
const transports = {
  'node:http': {} as Partial<Options>,
  fetch: { fetch: globalThis.fetch } as Partial<Options>,
};

const make = (o: Partial<Options> = {}) =>
  new OpenAIChatModel({ id: 'qwen@Ollama', model: 'qwen', baseUrl: server.url, apiKey: 'sk-test', retryBaseMs: 1, ...o });

const ask: ChatMessage[] = [
  { role: 'system', content: 'Answer from the knowledge.\nID: 0\nContent: lava' },
  { role: 'user', content: 'Why does a volcano erupt?' },
];

async function collect(it: AsyncIterable<ChatDelta>): Promise<ChatDelta[]> {
  const out: ChatDelta[] = [];
  for await (const d of it) out.push(d);
  return out;
}

/** Awaits `p` and returns the ChatModelError it rejected with (fails the test otherwise). */
async function failure(p: Promise<unknown>): Promise<ChatModelError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ChatModelError) return e;
    throw new Error(`expected ChatModelError, got ${String(e)}`, { cause: e });
  }
  throw new Error('expected the call to reject');
}

const text = (ds: ChatDelta[]) => ds.map((d) => d.content ?? '').join('');
const since = (t: number) => performance.now() - t;

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe.each(Object.entries(transports))('OpenAIChatModel over %s', (_name, transport) => {
  it('chat() answers; the request carries model, messages and the bearer key (only required params)', async () => {
    const m = make(transport);
    const res = await m.chat(ask);
    expect(res.content).toBe('Echo: Why does a volcano erupt? [ID:0]');
    expect(res.finish_reason).toBe('stop');
    expect(res.reasoning).toBeUndefined();
    expect(res.tool_calls).toBeUndefined();
    expect(server.requests).toHaveLength(1);
    const { headers, body } = server.requests[0]!;
    expect(headers.authorization).toBe('Bearer sk-test');
    expect(headers['content-type']).toBe('application/json');
    expect(body).toEqual({ model: 'qwen', messages: ask, stream: false });
  });

  it('stream() yields the answer piece by piece, then finish_reason and usage', async () => {
    const ds = await collect(make(transport).stream(ask));
    expect(text(ds)).toBe(defaultAnswer(server.requests[0]!.body));
    expect(ds.length).toBeGreaterThan(3);
    const last = ds[ds.length - 1]!;
    expect(last).toEqual({ finish_reason: 'stop', usage: { prompt_tokens: 13, completion_tokens: 7, total_tokens: 20 } });
    expect(ds.slice(0, -1).every((d) => d.content && !d.usage && !d.finish_reason)).toBe(true);
    expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(server.requests[0]!.headers.accept).toBe('text/event-stream');
  });

  it('a server silent past readTimeoutMs: kind "timeout" in bounded time, not retried, connection closed', async () => {
    server.script({ hang: true });
    const t = performance.now();
    const e = await failure(make({ ...transport, readTimeoutMs: 150, retries: 2 }).chat(ask));
    expect(since(t)).toBeLessThan(1_500);
    expect(e.kind).toBe('timeout');
    expect(e.message).toMatch(/^Chat model qwen@Ollama: timed out after 150 ms waiting for data from http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions$/);
    expect(server.requests).toHaveLength(1);
    await server.requests[0]!.closed;
    expect(server.requests[0]!.clientClosed).toBe(true);
  });

  it('a closed port: kind "network" after the retries, naming the cause', async () => {
    const port = await closedPort();
    const m = make({ ...transport, baseUrl: `http://127.0.0.1:${port}/v1`, retries: 1 });
    const e = await failure(m.chat(ask));
    expect(e.kind).toBe('network');
    expect(e.status).toBeUndefined();
    expect(e.message).toContain(`cannot reach http://127.0.0.1:${port}/v1/chat/completions`);
    expect(e.message).toContain('ECONNREFUSED');
    expect(e.message).toContain('after 2 attempts');
  });

  it('aborting during a stream: kind "aborted", and the server sees the connection closed', async () => {
    server.script({ deltas: Array.from({ length: 50 }, (_, i) => `w${i} `), delayMs: 20 });
    const ctl = new AbortController();
    const got: ChatDelta[] = [];
    const t = performance.now();
    const e = await failure(
      (async () => {
        for await (const d of make(transport).stream(ask, { signal: ctl.signal })) {
          got.push(d);
          if (got.length === 2) ctl.abort();
        }
      })(),
    );
    expect(e.kind).toBe('aborted');
    expect(got).toHaveLength(2);
    await server.requests[0]!.closed;
    expect(since(t)).toBeLessThan(800);
    expect(server.requests[0]!.clientClosed).toBe(true);
  });

  it('breaking out of the loop closes the request', async () => {
    server.script({ deltas: Array.from({ length: 50 }, (_, i) => `w${i} `), delayMs: 20 });
    const t = performance.now();
    for await (const d of make(transport).stream(ask)) {
      expect(d.content).toBe('w0 ');
      break;
    }
    await server.requests[0]!.closed;
    expect(since(t)).toBeLessThan(800);
    expect(server.requests[0]!.clientClosed).toBe(true);
    expect(server.aborted()).toBe(1);
  });
});

describe('OpenAIChatModel request mapping', () => {
  it('maps sampling options, stop, tools, json and tool messages; custom headers; a trailing "/" (required and optional params)', async () => {
    const tools: ToolSpec[] = [{ type: 'function', function: { name: 'lookup', description: 'Find a fact', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Find lava facts' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"lava"}' } }] },
      { role: 'tool', content: 'Lava is molten rock.', tool_call_id: 'call_1', name: 'lookup' },
    ];
    const m = make({ baseUrl: `${server.url}/`, headers: { 'X-Trace': 'abc' }, maxTokens: 32_000 });
    expect(m.maxTokens).toBe(32_000);
    expect(m.id).toBe('qwen@Ollama');
    const res = await m.chat(messages, {
      temperature: 0.2, top_p: 0.9, presence_penalty: 0.4, frequency_penalty: 0.7, max_tokens: 256,
      stop: ['\n\n'], tools, json: true, knowledge: [{ id: 0, title: 't', content: 'c' }], empty_response: 'nothing',
    });
    expect(JSON.parse(res.content)).toEqual({ answer: 'Echo: Find lava facts' });
    const { headers, body } = server.requests[0]!;
    expect(headers['x-trace']).toBe('abc');
    expect(body).toEqual({
      model: 'qwen', messages, stream: false, temperature: 0.2, top_p: 0.9, presence_penalty: 0.4, frequency_penalty: 0.7,
      max_tokens: 256, stop: ['\n\n'], tools, response_format: { type: 'json_object' },
    });
  });

  it('streamUsage: false leaves out stream_options', async () => {
    await collect(make({ streamUsage: false }).stream(ask));
    expect(server.requests[0]!.body.stream_options).toBeUndefined();
  });

  it('rejects misspelt and missing options with a TypeError', () => {
    expect(() => make({ baseURL: 'http://x/v1' } as unknown as Options)).toThrow('did you mean "baseUrl"');
    expect(() => make({ model: '' })).toThrow('"model" is required');
    expect(() => make({ baseUrl: 'localhost:11434' })).toThrow(TypeError);
    expect(() => make({ retries: -1 })).toThrow('"retries"');
  });
});

describe('OpenAIChatModel usage', () => {
  it('passes the server usage through (chat and stream)', async () => {
    const usage = { prompt_tokens: 101, completion_tokens: 7, total_tokens: 108 };
    server.script({ usage }, { usage });
    expect((await make().chat(ask)).usage).toEqual(usage);
    const ds = await collect(make().stream(ask));
    expect(ds[ds.length - 1]!.usage).toEqual(usage);
  });

  it('estimates usage when the server sends none (chars/4, or the countTokens given)', async () => {
    server.script({ usage: false, text: 'abcdefgh' }, { usage: false, text: 'one two three' }, { usage: false, text: 'x' });
    const a = await make().chat([{ role: 'user', content: 'abcdefghijkl' }]);
    // 2 for the reply priming + 4 per message + ceil(12 / 4); completion ceil(8 / 4).
    expect(a.usage).toEqual({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
    const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
    const ds = await collect(make({ countTokens: words }).stream([{ role: 'user', content: 'a b c d e' }]));
    expect(ds[ds.length - 1]!.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    const b = await make().chat(ask);
    expect(b.usage.completion_tokens).toBe(1);
    expect(b.usage.prompt_tokens).toBeGreaterThan(10);
  });
});

describe('OpenAIChatModel streaming protocol', () => {
  const answer = 'Héllo wörld — 世界 🎉 done.';

  it('reassembles events split across reads, with \\r\\n, comments and multi-line data', async () => {
    server.script({ text: answer, sse: { lineEnding: '\r\n', comments: true, multiline: true, fragmentBytes: 5 } });
    const ds = await collect(make().stream(ask));
    expect(text(ds)).toBe(answer);
    expect(ds[ds.length - 1]!.finish_reason).toBe('stop');
  });

  it('handles bare \\r line endings split between reads', async () => {
    server.script({ text: answer, sse: { lineEnding: '\r', fragmentBytes: 7 } });
    expect(text(await collect(make().stream(ask)))).toBe(answer);
  });

  it('a malformed line: kind "protocol" naming the line, after the text before it', async () => {
    server.script({ malformed: 'data: {"choices": [{"delta": {"content": "lost', malformedAfter: 3 });
    const got: ChatDelta[] = [];
    const e = await failure(
      (async () => {
        for await (const d of make({ retries: 3 }).stream(ask)) got.push(d);
      })(),
    );
    expect(e.kind).toBe('protocol');
    expect(e.message).toContain('malformed event');
    expect(e.message).toContain('data: {\\"choices\\": [{\\"delta\\": {\\"content\\": \\"lost');
    expect(text(got)).toBe('Echo: Why ');
    expect(server.requests).toHaveLength(1);
  });

  it('an error event inside the stream: kind "http" with the server message', async () => {
    server.script({ malformed: 'data: {"error": {"message": "model overloaded", "code": 503}}', malformedAfter: 2 });
    const e = await failure(collect(make().stream(ask)));
    expect(e.kind).toBe('http');
    expect(e.status).toBe(503);
    expect(e.message).toContain('model overloaded');
  });

  it('llama.cpp\'s `error:` line inside the stream: kind "http" with its message', async () => {
    server.script({ malformed: 'error: {"code": 500, "message": "context size exceeded", "type": "server_error"}', malformedAfter: 2 });
    const e = await failure(collect(make().stream(ask)));
    expect([e.kind, e.status]).toEqual(['http', 500]);
    expect(e.message).toContain('reported an error: context size exceeded');
  });

  it('a body that is not SSE: kind "protocol"', async () => {
    server.script({ status: 200, body: 'upstream says hi', headers: { 'content-type': 'text/event-stream' } });
    const e = await failure(collect(make().stream(ask)));
    expect(e.kind).toBe('protocol');
    expect(e.message).toContain('upstream says hi');
  });

  it('a stream that ends with neither finish_reason nor [DONE]: kind "protocol", not a silently short answer', async () => {
    const cut = 'data: {"choices": [{"index": 0, "delta": {"content": "Half an ans"}}]}\n\n';
    server.script({ status: 200, body: cut, headers: { 'content-type': 'text/event-stream' } });
    const got: ChatDelta[] = [];
    const e = await failure(
      (async () => {
        for await (const d of make().stream(ask)) got.push(d);
      })(),
    );
    expect(text(got)).toBe('Half an ans');
    expect(e.kind).toBe('protocol');
    expect(e.message).toContain('ended before the answer was complete');
  });

  it('a non-JSON body to chat(): kind "protocol"', async () => {
    server.script({ status: 200, body: '<html>gateway</html>', headers: { 'content-type': 'text/html' } });
    const e = await failure(make().chat(ask));
    expect(e.kind).toBe('protocol');
    expect(e.message).toContain('is not JSON');
  });

  it('a JSON answer to a stream request is yielded as one delta', async () => {
    server.script({ json: true, text: 'whole answer' });
    const ds = await collect(make().stream(ask));
    expect(ds.map((d) => d.content ?? '')).toEqual(['whole answer', '']);
    expect(ds[1]!.finish_reason).toBe('stop');
  });

  it('assembles tool calls streamed in pieces (and returns them from chat())', async () => {
    const toolCalls = [
      { id: 'call_a', name: 'get_weather', arguments: '{"city": "Reykjavík", "unit": "celsius"}' },
      { id: 'call_b', name: 'get_time', arguments: '{"tz": "Atlantic/Reykjavik"}' },
    ];
    const expected = toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    server.script({ text: '', toolCalls }, { text: '', toolCalls });
    const ds = await collect(make().stream(ask));
    expect(ds).toHaveLength(1);
    expect(ds[0]!.finish_reason).toBe('tool_calls');
    expect(ds[0]!.tool_calls).toEqual(expected);
    const res = await make().chat(ask);
    expect(res.tool_calls).toEqual(expected);
    expect(res.content).toBe('');
    expect(res.finish_reason).toBe('tool_calls');
  });

  it('streams reasoning_content apart from the content', async () => {
    server.script({ reasoning: 'Magma is buoyant, so it rises.', text: 'It rises.' }, { reasoning: 'Think.', text: 'Done.' });
    const ds = await collect(make().stream(ask));
    const thinking = ds.filter((d) => d.reasoning);
    expect(thinking.map((d) => d.reasoning).join('')).toBe('Magma is buoyant, so it rises.');
    expect(thinking.every((d) => d.content === undefined)).toBe(true);
    expect(ds.indexOf(thinking[thinking.length - 1]!)).toBeLessThan(ds.findIndex((d) => d.content));
    expect(text(ds)).toBe('It rises.');
    const res = await make().chat(ask);
    expect([res.reasoning, res.content]).toEqual(['Think.', 'Done.']);
  });
});

describe('OpenAIChatModel retries', () => {
  it('429 then success: retried after the Retry-After seconds', async () => {
    server.script({ status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached' } } });
    const res = await make({ retryBaseMs: 1 }).chat(ask);
    expect(res.content).toContain('Echo:');
    expect(server.requests).toHaveLength(2);
    const waited = server.requests[1]!.at - server.requests[0]!.at;
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(2_000);
  });

  it('a Retry-After HTTP date is read, and capped at maxRetryDelayMs', async () => {
    server.script({ status: 503, headers: { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() } });
    const res = await collect(make({ retryBaseMs: 1, maxRetryDelayMs: 120 }).stream(ask));
    expect(text(res)).toContain('Echo:');
    const waited = server.requests[1]!.at - server.requests[0]!.at;
    expect(waited).toBeGreaterThanOrEqual(110);
    expect(waited).toBeLessThan(1_000);
  });

  it('500 three times: the error after the retries, with the status and the server message', async () => {
    const fail = { status: 500, body: { error: { message: 'CUDA out of memory' } } };
    server.script(fail, fail, fail);
    const e = await failure(make({ retries: 2 }).chat(ask));
    expect(server.requests).toHaveLength(3);
    expect([e.kind, e.status]).toEqual(['http', 500]);
    expect(e.message).toBe(`Chat model qwen@Ollama: HTTP 500 from ${server.url}/chat/completions: CUDA out of memory (after 3 attempts)`);
  });

  it('400 is not retried', async () => {
    server.script({ status: 400, body: { error: { message: "'messages' must not be empty" } } });
    const e = await failure(make().chat(ask));
    expect(server.requests).toHaveLength(1);
    expect([e.kind, e.status]).toEqual(['http', 400]);
    expect(e.message).toBe(`Chat model qwen@Ollama: HTTP 400 from ${server.url}/chat/completions: 'messages' must not be empty`);
  });

  it('401 names the server message; 404 hints at the version path', async () => {
    const e = await failure(make({ apiKey: 'wrong' }).chat(ask));
    expect([e.kind, e.status]).toEqual(['http', 401]);
    expect(e.message).toBe(`Chat model qwen@Ollama: HTTP 401 from ${server.url}/chat/completions: Incorrect API key provided.`);
    const base = server.url.replace(/\/v1$/, '');
    const e404 = await failure(make({ baseUrl: base }).chat(ask));
    expect(e404.status).toBe(404);
    expect(e404.message).toContain(`${base}/chat/completions`);
    expect(e404.message).toContain('including its version path');
  });

  it('a connection dropped before any delta is retried; after a delta it is thrown', async () => {
    server.script({ dropAfter: 1 });
    const ds = await collect(make().stream(ask));
    expect(text(ds)).toContain('Echo:');
    expect(server.requests).toHaveLength(2);

    server.reset();
    server.script({ dropAfter: 4 });
    const got: ChatDelta[] = [];
    const e = await failure(
      (async () => {
        for await (const d of make().stream(ask)) got.push(d);
      })(),
    );
    expect(e.kind).toBe('network');
    expect(got.length).toBe(3);
    expect(server.requests).toHaveLength(1);
  });

  it('a body cut short in chat() is retried', async () => {
    server.script({ dropAfter: 0 });
    expect((await make().chat(ask)).content).toContain('Echo:');
    expect(server.requests).toHaveLength(2);
  });
});

describe('OpenAIChatModel timeouts and cancellation', () => {
  it('a stream that stops midway: kind "timeout" after the text already delivered', async () => {
    server.script({ hangAfter: 4 });
    const got: ChatDelta[] = [];
    const t = performance.now();
    const e = await failure(
      (async () => {
        for await (const d of make({ readTimeoutMs: 150 }).stream(ask)) got.push(d);
      })(),
    );
    expect(e.kind).toBe('timeout');
    expect(e.message).toContain('timed out after 150 ms waiting for data');
    expect(since(t)).toBeLessThan(1_500);
    expect(text(got)).toBe('Echo: Why does ');
    await server.requests[0]!.closed;
    expect(server.requests[0]!.clientClosed).toBe(true);
  });

  it('the read timeout restarts with each byte, and the caller’s own time does not count', async () => {
    server.script({ delayMs: 20 }, { delayMs: 20 });
    // 11 events 20 ms apart: ~220 ms in all, never 150 ms of silence.
    expect(text(await collect(make({ readTimeoutMs: 150 }).stream(ask)))).toContain('Echo:');
    // The caller dawdles 250 ms over the first delta while the server goes on sending.
    let first = true;
    const ds: ChatDelta[] = [];
    for await (const d of make({ readTimeoutMs: 150 }).stream(ask)) {
      ds.push(d);
      if (first) await new Promise((r) => setTimeout(r, 300));
      first = false;
    }
    expect(ds[ds.length - 1]!.finish_reason).toBe('stop');
  });

  it('a connection that never gets through the TLS handshake: kind "timeout" (connect), retried', async () => {
    // A TCP listener that never speaks TLS: the socket opens, the https handshake never ends.
    const sockets: Socket[] = [];
    const silent = createServer((sock) => void sockets.push(sock));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    try {
      const t = performance.now();
      const e = await failure(make({ baseUrl: `https://127.0.0.1:${port}/v1`, connectTimeoutMs: 100, readTimeoutMs: 60_000, retries: 1 }).chat(ask));
      expect(since(t)).toBeLessThan(1_000);
      expect(e.kind).toBe('timeout');
      expect(e.message).toContain(`timed out after 100 ms connecting to 127.0.0.1:${port}`);
      expect(e.message).toContain('after 2 attempts');
      expect(sockets).toHaveLength(2);
    } finally {
      sockets.forEach((x) => x.destroy());
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('a signal aborted before the call: kind "aborted", no request sent', async () => {
    const ctl = new AbortController();
    ctl.abort();
    const e = await failure(make().chat(ask, { signal: ctl.signal }));
    expect(e.kind).toBe('aborted');
    expect(e.message).toBe(`Chat model qwen@Ollama: the request to ${server.url}/chat/completions was aborted`);
    await expect(collect(make().stream(ask, { signal: ctl.signal }))).rejects.toMatchObject({ kind: 'aborted' });
    expect(server.requests).toHaveLength(0);
  });

  it('aborting chat() while the server thinks: kind "aborted", connection closed', async () => {
    server.script({ hang: true });
    const t = performance.now();
    const e = await failure(make().chat(ask, { signal: AbortSignal.timeout(100) }));
    expect(e.kind).toBe('aborted');
    await server.requests[0]!.closed;
    expect(since(t)).toBeLessThan(1_000);
    expect(server.requests[0]!.clientClosed).toBe(true);
  });

  it('aborting during the backoff sleep: kind "aborted" at once', async () => {
    server.script({ status: 429, headers: { 'retry-after': '20' } });
    const t = performance.now();
    const e = await failure(make().chat(ask, { signal: AbortSignal.timeout(150) }));
    expect(e.kind).toBe('aborted');
    expect(since(t)).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
  });

  it('close() aborts the requests in flight and refuses new ones', async () => {
    server.script({ hang: true });
    const m = make();
    const p = failure(m.chat(ask));
    await new Promise((r) => setTimeout(r, 50));
    await m.close();
    const e = await p;
    expect(e.kind).toBe('aborted');
    expect(e.message).toContain('closed');
    expect((await failure(m.chat(ask))).kind).toBe('aborted');
  });
});
