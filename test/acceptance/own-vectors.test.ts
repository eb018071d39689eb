/**
 * ragloom's own-vector fields in both modes: `addChunk({ vector })` stores the caller's vector,
 * `retrieve({ question_vector })` ranks with the caller's question vector (a blank question: by the
 * vector alone). What LangChain's addVectors / similaritySearchVectorWithScore and LlamaIndex's
 * query embeddings stand on (src/integrations).
 */
import { describe, expect } from 'vitest';
import { MODES, acceptance, failure, enc } from './modes.js';

/** Unit vectors in 4 dimensions, at known angles. */
const V = {
  tides: [1, 0, 0, 0],
  bread: [0, 1, 0, 0],
  rivers: [0.6, 0, 0.8, 0],
};

describe.each(MODES)('%s mode', (mode) => {
  const test = acceptance(mode);

  describe('Document#addChunk({ vector }) / Client#retrieve({ question_vector })', () => {
    test('own vectors rank by their cosine; a question adds its term side; bad vectors are refused before anything is written', async ({ client }) => {
      const ds = await client.createDataset({ name: 'own' });
      const [doc] = await ds.uploadDocuments([{ display_name: 'notes.txt', blob: enc('notes') }]);
      const added = {
        tides: await doc!.addChunk({ content: 'The moon pulls the ocean tides.', vector: V.tides }),
        bread: await doc!.addChunk({ content: 'Knead the bread dough.', vector: V.bread.map((x) => x * 7) }),
        rivers: await doc!.addChunk({ content: 'Rivers carry water to the sea.', vector: V.rivers }),
      };
      // By the vector alone: cosine with [0.8, 0, 0.6, 0] is 0.8 (tides), 0.96 (rivers), 0 (bread).
      const alone = await client.retrieve({ dataset_ids: [ds.id], question: '', question_vector: [0.8, 0, 0.6, 0], similarity_threshold: 0, vector_similarity_weight: 1 });
      expect(alone.map((c) => [c.id, Number(c.vector_similarity!.toFixed(4)), c.term_similarity])).toEqual([
        [added.rivers.id, 0.96, 0], [added.tides.id, 0.8, 0], [added.bread.id, 0, 0],
      ]);
      // The stored vector was scaled to unit length: bread's ×7 vector has cosine 1 with itself.
      const bread = await client.retrieve({ dataset_ids: [ds.id], question: '', question_vector: [0, 3, 0, 0], vector_similarity_weight: 1 });
      expect(bread[0]).toMatchObject({ id: added.bread.id });
      expect(bread[0]!.vector_similarity).toBeCloseTo(1, 5);

      // With the question's words too: the text side finds "bread" although the vector points at tides.
      const both = await client.retrieve({ dataset_ids: [ds.id], question: 'bread dough', question_vector: V.tides, similarity_threshold: 0, vector_similarity_weight: 0.5 });
      const byId = new Map(both.map((c) => [c.id, c]));
      expect(byId.get(added.bread.id)!.term_similarity).toBeGreaterThan(0);
      expect(byId.get(added.bread.id)!.vector_similarity).toBeCloseTo(0, 5);
      expect(byId.get(added.tides.id)!.vector_similarity).toBeCloseTo(1, 5);
      expect(byId.get(added.tides.id)!.term_similarity).toBe(0);

      // A question without its own vector is embedded by the dataset's model (256-d) and searches
      // the chunks that have a vector of that length: none here, on either side.
      expect(await client.retrieve({ dataset_ids: [ds.id], question: 'ocean tides', similarity_threshold: 0 })).toEqual([]);

      // A blank question without a vector still returns nothing, as RAGFlow's.
      expect(await client.retrieve({ dataset_ids: [ds.id], question: ' ' })).toEqual([]);

      const before = (await ds.listDocuments())[0]!.chunk_count;
      for (const [bad, message] of [
        ['0.1,0.2', '`vector` should be a list of 1 to 8192 finite numbers'],
        [[], '`vector` should be a list of 1 to 8192 finite numbers'],
        [[0.1, 'x'], '`vector` should be a list of 1 to 8192 finite numbers'],
        [new Array(8193).fill(0.5), '`vector` should be a list of 1 to 8192 finite numbers'],
        [[0, 0, 0, 0], '`vector` should not be all zeros'],
      ] as const) {
        expect(await failure(doc!.addChunk({ content: 'Not stored.', vector: bad as unknown as number[] }))).toEqual([101, message]);
      }
      expect((await ds.listDocuments())[0]!.chunk_count).toBe(before);
      expect(await failure(client.retrieve({ dataset_ids: [ds.id], question: 'x', question_vector: [0, 0] }))).toEqual([101, '`question_vector` should not be all zeros']);
      expect(await failure(client.retrieve({ dataset_ids: [ds.id], question: 'x', question_vector: { 0: 1 } as unknown as number[] }))).toEqual([101, '`question_vector` should be a list of 1 to 8192 finite numbers']);
      // Huge and tiny magnitudes are scaled without overflowing.
      const huge = await client.retrieve({ dataset_ids: [ds.id], question: '', question_vector: [1e200, 0, 0, 0], vector_similarity_weight: 1 });
      expect(huge[0]).toMatchObject({ id: added.tides.id });
      expect(huge[0]!.vector_similarity).toBeCloseTo(1, 5);
      const tiny = await client.retrieve({ dataset_ids: [ds.id], question: '', question_vector: [0, 1e-200, 0, 0], vector_similarity_weight: 1 });
      expect(tiny[0]).toMatchObject({ id: added.bread.id });
    });
  });
});
