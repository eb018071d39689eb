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

  test('a bad key is an OpenAI AuthenticationError (HTTP 401)', async ({ srv, api }) => {
    const chat = (await api.call('POST', '/chats', { name: 'c', dataset_ids: [] })).body.data;
    const client = new OpenAI({ baseURL: `${srv.url}/api/v1/openai/${chat.id}`, apiKey: 'ragflow-wrong', maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'model', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
