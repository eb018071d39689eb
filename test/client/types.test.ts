/**
 * The Client's parameter types: checked by `tsc` (`npm run typecheck`; tsconfig includes test/).
 * Each `@ts-expect-error` line must fail to compile: a misspelt key or a wrong value is caught
 * before run time. The functions below are never called; the test only keeps vitest content.
 */
import { describe, expect, it } from 'vitest';
import type {
  Client, DataSet, Document, Chunk, Chat, Session, Memory, ChunkMethod, DatasetChunkMethod, DocumentChunkMethod,
  RetrieveParams, RetrieveWithTotals, DocAgg, ClientOptions,
} from '../../src/index.js';
import type { DATASET_CHUNK_METHODS, DOCUMENT_CHUNK_METHODS } from '../../src/api/parser-config.js';
import type { startServer } from '../../src/server/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const assertType = <T extends true>(): T => true as T;

// The unions are the validators' lists, exactly.
assertType<Equal<DatasetChunkMethod, (typeof DATASET_CHUNK_METHODS)[number]>>();
assertType<Equal<DocumentChunkMethod, (typeof DOCUMENT_CHUNK_METHODS)[number]>>();
assertType<Equal<ChunkMethod, DatasetChunkMethod | DocumentChunkMethod>>();
assertType<Equal<Awaited<ReturnType<Client['retrieveWithTotals']>>, RetrieveWithTotals>>();
assertType<Equal<RetrieveWithTotals, { total: number; chunks: Chunk[]; doc_aggs: DocAgg[] }>>();

export async function retrieve(client: Client): Promise<void> {
  const ok: RetrieveParams = {
    dataset_ids: ['a'], question: 'q', document_ids: null, page: 1, page_size: 30, similarity_threshold: 0.2, vector_similarity_weight: 0.3,
    top_k: 1024, rerank_id: null, keyword: false, cross_languages: ['German'], highlight: true, use_kg: false, toc_enhance: false,
    metadata_condition: { logic: 'or', conditions: [{ name: 'author', comparison_operator: 'not contains', value: 'x' }] },
  };
  await client.retrieve(ok);
  const { total, chunks, doc_aggs } = await client.retrieveWithTotals(ok);
  void [total.toFixed(), chunks[0]?.similarity, doc_aggs[0]?.doc_name];
  // @ts-expect-error misspelt key
  await client.retrieve({ dataset_ids: ['a'], question: 'q', similarity_treshold: 0.1 });
  // @ts-expect-error misspelt key
  await client.retrieve({ dataset_ids: ['a'], question: 'q', vector_similarity_weigth: 0.5 });
  // @ts-expect-error dataset_ids is a list
  await client.retrieve({ dataset_ids: 'a', question: 'q' });
  // @ts-expect-error question is required
  await client.retrieve({ dataset_ids: ['a'] });
  // @ts-expect-error top_k is a number
  await client.retrieveWithTotals({ dataset_ids: ['a'], question: 'q', top_k: '5' });
  // @ts-expect-error an operator the reference does not have
  await client.retrieve({ dataset_ids: ['a'], question: 'q', metadata_condition: { conditions: [{ name: 'a', comparison_operator: 'like' }] } });
}

export async function datasets(client: Client, ds: DataSet, doc: Document, chunk: Chunk): Promise<void> {
  await client.createDataset({ name: 'kb', chunk_method: 'qa', parser_config: { chunk_token_num: 256, raptor: { use_raptor: false } } });
  // @ts-expect-error not a dataset chunk method (reference §3)
  await client.createDataset({ name: 'kb', chunk_method: 'knowledge_graph' });
  // @ts-expect-error not a chunk method at all
  await client.createDataset({ name: 'kb', chunk_method: 'naïve' });
  // @ts-expect-error misspelt parser_config key
  await client.createDataset({ name: 'kb', parser_config: { chunk_token_number: 256 } });
  await ds.update({ pagerank: 10, chunk_method: 'book', description: null });
  // @ts-expect-error misspelt key
  await ds.update({ page_rank: 10 });
  await ds.listDocuments({ keywords: 'x', page_size: 0, orderby: 'update_time', run: ['DONE', 'FAIL'] });
  // @ts-expect-error misspelt key
  await ds.listDocuments({ keyword: 'x' });

  await doc.update({ name: 'b.txt', chunk_method: 'knowledge_graph', meta_fields: { year: 1962, tags: ['a'] }, enabled: 0 });
  // @ts-expect-error not a document chunk method (reference §4)
  await doc.update({ chunk_method: 'resume' });
  // @ts-expect-error misspelt key
  await doc.update({ meta_field: {} });
  // @ts-expect-error meta_fields is an object
  await doc.update({ meta_fields: 'x' });

  await chunk.update({ content: 'x', important_keywords: ['a'], available: false, positions: [[1, 2, 3, 4, 5]] });
  await chunk.update({ content: null });
  // @ts-expect-error misspelt key
  await chunk.update({ important_keyword: ['a'] });
  // @ts-expect-error a list of strings
  await chunk.update({ questions: 'why?' });
  const method: ChunkMethod | 'audio' = doc.chunk_method;
  // @ts-expect-error a document's method may be 'audio', which no dataset has
  const narrow: ChunkMethod = doc.chunk_method;
  void narrow;
  void method;
}

export async function chats(client: Client, chat: Chat, session: Session, memory: Memory): Promise<void> {
  await client.createChat({ name: 'c', dataset_ids: ['a'], llm_setting: { temperature: 0.1 }, prompt_config: { quote: false, empty_response: '' }, top_n: 8 });
  // @ts-expect-error misspelt key
  await client.createChat({ name: 'c', dataset_id: ['a'] });
  // @ts-expect-error misspelt prompt_config key
  await client.createChat({ name: 'c', prompt_config: { empty_reponse: '' } });
  await chat.update({ similarity_threshold: 0.3 });
  // @ts-expect-error misspelt key
  await chat.update({ similarity_treshold: 0.3 });
  await session.update({ name: 'n' });
  // @ts-expect-error only the name changes
  await session.update({ name: 'n', messages: [] });
  await client.createMemory({ name: 'm', memory_type: ['raw', 'semantic'], embd_id: 'e@f', llm_id: 'l@f' });
  // @ts-expect-error not a memory type
  await client.createMemory({ name: 'm', memory_type: ['raw', 'semantics'], embd_id: 'e@f', llm_id: 'l@f' });
  await memory.update({ memory_size: 1024, temperature: 0.2 });
  // @ts-expect-error misspelt key
  await memory.update({ memory_sise: 1024 });
  const done = await client.chatCompletion('id', { model: 'model', messages: [{ role: 'user', content: 'q' }], extra_body: { reference: true } });
  // The answers are typed: a plain call's message, a stream's deltas (they were Record<string, unknown>).
  assertType<Equal<typeof done.choices[0]['message']['content'], string>>();
  assertType<Equal<typeof done.usage.total_tokens, number>>();
  for await (const c of await client.chatCompletion('id', { model: 'model', messages: [{ role: 'user', content: 'q' }], stream: true })) {
    assertType<Equal<typeof c.choices[0]['delta']['content'], string | null>>();
    assertType<Equal<typeof c.choices[0]['finish_reason'], 'stop' | null>>();
  }
  // @ts-expect-error not a field of the answer
  void done.choices[0].text;
  // @ts-expect-error misspelt extra_body key
  await client.chatCompletion('id', { model: 'model', messages: [{ role: 'user', content: 'q' }], extra_body: { refrence: true } });
  // @ts-expect-error misspelt key
  await client.createAgent({ title: 't', dsl: {}, descripton: 'd' });
  // @ts-expect-error misspelt key
  await client.updateAgent('id', { titel: 't' });
}

export function options(start: typeof startServer): void {
  const ok: ClientOptions = { path: ':memory:', retrieval: { termFeedbackDocs: 0, exactVectors: true } };
  void ok;
  // @ts-expect-error misspelt setting
  const bad: ClientOptions = { path: ':memory:', retrieval: { termFeedbackDoc: 0 } };
  void bad;
  // @ts-expect-error a number
  const wrong: ClientOptions = { path: ':memory:', retrieval: { feedbackDocs: '5' } };
  void wrong;
  void start({ path: 'kb.db', retrieval: { feedbackSearch: true } });
}

describe('the Client parameter types', () => {
  it('are checked by tsc (npm run typecheck)', () => {
    expect(typeof retrieve).toBe('function');
  });
});
