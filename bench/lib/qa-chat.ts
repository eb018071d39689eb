/**
 * The set's documents in a fresh database with every default and a default chat over them, and what
 * `session.ask` gives the chat's model for a question: the chunks of the chat's own retrieval as
 * knowledge items, and the question's terms no chunk holds. For benchmarks that call the built-in
 * model directly (bench/qa-decline.ts, bench/qa-tune.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../../src/index.js';
import { knowledgeBlock } from '../../src/core/ask.js';
import type { KnowledgeItem } from '../../src/llm/types.js';
import { analyze } from '../../src/text/index.js';

export interface QaChat {
  /** The chat's empty_response (its decline). */
  empty: string;
  /** The chunks the chat retrieves for a question, as the knowledge items its model gets. */
  knowledge(question: string, maxTokens?: number): Promise<KnowledgeItem[]>;
  /**
   * The question's terms no chunk holds: what retrieval reports to session.ask (RetrieveResult.unknown,
   * from the FTS index's document frequencies), computed here from the chunks as client.retrieve does not return it.
   */
  unknown(question: string): string[];
  close(): Promise<void>;
}

/** Uploads and parses `documents` (name → bytes) into a new dataset in a temporary file and creates a default chat. */
export async function openQaChat(documents: Map<string, Uint8Array>, prefix: string): Promise<QaChat> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const client = new Client({ path: join(dir, 'kb.db') });
  const close = async () => {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ds = await client.createDataset({ name: 'qa' });
    const docs = await ds.uploadDocuments([...documents].map(([name, blob]) => ({ display_name: name, blob })));
    const parsed = await ds.parseDocuments(docs.map((d) => d.id));
    if (parsed.some((r) => r[1] !== 'DONE')) throw new Error(`parsing failed: ${JSON.stringify(parsed)}`);
    const chat = await client.createChat({ name: 'qa', dataset_ids: [ds.id] });
    const held = new Set<string>();
    for (const d of docs) for (const c of await d.listChunks({ page_size: 100_000 })) for (const t of analyze(c.content)) held.add(t);
    return {
      empty: (chat.prompt_config as { empty_response?: string } | undefined)?.empty_response ?? '',
      async knowledge(question, maxTokens = 32768) {
        const chunks = await client.retrieve({
          dataset_ids: [ds.id], question, page_size: chat.top_n, top_k: chat.top_k,
          similarity_threshold: chat.similarity_threshold, vector_similarity_weight: chat.vector_similarity_weight,
        });
        return knowledgeBlock(chunks as unknown as Record<string, unknown>[], maxTokens).items;
      },
      unknown: (question) => analyze(question).filter((t) => !held.has(t)),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
