/** The `openai` npm package against `ragloom serve`: `baseURL = ${url}/api/v1/openai/${chatId}`. */
import { describe, expect } from 'vitest';
import OpenAI from 'openai';
import { test, parsedDataset } from './fixtures.js';

describe('OpenAI SDK → /api/v1/openai/{chat_id}/chat/completions', () => {
  test('chat.completions.create, non-streamed and streamed', async ({ srv, api }) => {
    const { datasetId } = await parsedDataset(api);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [datasetId] })).body.data;
    const client = new OpenAI({ baseURL: `${srv.url}/api/v1/openai/${chat.id}`, apiKey: srv.apiKey, maxRetries: 0 });

    const done = await client.chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'How long should the dough rise?' }], stream: false });
    expect(done.object).toBe('chat.completion');
    expect(done.id).toBe(`chatcmpl-${chat.id}`);
    expect(done.choices[0]!.finish_reason).toBe('stop');
    expect(done.choices[0]!.message.role).toBe('assistant');
    expect(done.choices[0]!.message.content).toMatch(/rise for one hour/);
    expect(done.usage!.total_tokens).toBe(done.usage!.prompt_tokens + done.usage!.completion_tokens);

    const stream = await client.chat.completions.create({
      model: 'model', stream: true,
      messages: [{ role: 'system', content: 'Answer from the knowledge base.' }, { role: 'user', content: 'Why are there spring tides?' }],
    });
    let text = '';
    let finish: string | null = null;
    let chunks = 0;
    for await (const c of stream) {
      chunks++;
      expect(c.object).toBe('chat.completion.chunk');
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(chunks).toBeGreaterThan(1);
    expect(finish).toBe('stop');
    expect(text).toMatch(/sun and the moon/);
  });

  test('without `stream` in the body: the plain call gets JSON, the streamed helper gets events; curl-like requests still stream', async ({ srv, api }) => {
    const { datasetId } = await parsedDataset(api);
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [datasetId] })).body.data;
    const client = new OpenAI({ baseURL: `${srv.url}/api/v1/openai/${chat.id}`, apiKey: srv.apiKey, maxRetries: 0 });
    const sent: Array<{ body: Record<string, unknown>; accept: string | null }> = [];
    const spy = new OpenAI({
      baseURL: `${srv.url}/api/v1/openai/${chat.id}`, apiKey: srv.apiKey, maxRetries: 0,
      fetch: async (url, init) => {
        sent.push({ body: JSON.parse(String(init?.body)), accept: new Headers(init?.headers).get('accept') });
        return fetch(url, init);
      },
    });

    // How every OpenAI client sends a plain request: no `stream` field, Accept: application/json.
    const done = await spy.chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'How long should the dough rise?' }] });
    expect(sent[0]!.body).not.toHaveProperty('stream');
    expect(sent[0]!.accept).toBe('application/json');
    expect(done.object).toBe('chat.completion');
    expect(done.choices[0]!.message.content).toMatch(/rise for one hour/);

    // The streaming helper: the SDK itself asks for the stream.
    const runner = client.chat.completions.stream({ model: 'model', messages: [{ role: 'user', content: 'Why are there spring tides?' }] });
    let chunks = 0;
    for await (const c of runner) {
      expect(c.object).toBe('chat.completion.chunk');
      chunks++;
    }
    expect(chunks).toBeGreaterThan(1);
    expect((await runner.finalChatCompletion()).choices[0]!.message.content).toMatch(/sun and the moon/);

    // Without an Accept that asks for JSON only, a missing `stream` streams, as RAGFlow does.
    const url = `${srv.url}/api/v1/openai/${chat.id}/chat/completions`;
    const body = JSON.stringify({ model: 'model', messages: [{ role: 'user', content: 'Why are there spring tides?' }] });
    for (const accept of [undefined, '*/*', 'text/event-stream', 'application/json, text/event-stream', 'application/json;q=0, text/plain']) {
      const res = await fetch(url, { method: 'POST', body, headers: { authorization: `Bearer ${srv.apiKey}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) } });
      expect(res.headers.get('content-type'), String(accept)).toMatch(/^text\/event-stream/);
      expect(await res.text()).toMatch(/data:\[DONE\]/);
    }
    // `stream: true` wins over the Accept header; any JSON type (`+json`) asks for JSON.
    const streamed = await fetch(url, { method: 'POST', body: JSON.stringify({ ...JSON.parse(body), stream: true }), headers: { authorization: `Bearer ${srv.apiKey}`, 'content-type': 'application/json', accept: 'application/json' } });
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await streamed.text();
    const plain = await fetch(url, { method: 'POST', body, headers: { authorization: `Bearer ${srv.apiKey}`, 'content-type': 'application/json', accept: 'application/vnd.api+json' } });
    expect(((await plain.json()) as { object: string }).object).toBe('chat.completion');
  });

  test('a bad key is an OpenAI AuthenticationError (HTTP 401)', async ({ srv, api }) => {
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [] })).body.data;
    const client = new OpenAI({ baseURL: `${srv.url}/api/v1/openai/${chat.id}`, apiKey: 'ragflow-wrong', maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
