/**
 * An ingest worker thread: parses and chunks files, analyses chunks for the full-text index, and
 * runs CPU-bound embedding models, so the caller's thread stays free to write. Stateless between
 * jobs except for loaded models (and the analyzer's word memo).
 */
import { parentPort } from 'node:worker_threads';
import type { FromWorker, ToWorker } from './protocol.js';
import { ModelRegistry } from '../../embed/index.js';
import { ftsTerms } from '../../text/index.js';

const port = parentPort!;
const models = new ModelRegistry();
const send = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

port.on('message', (m: ToWorker) => {
  void handle(m).catch((e: unknown) => {
    send({ type: 'error', job: m.job, message: e instanceof Error ? e.message : String(e), parseError: (e as Error)?.name === 'ParseError' });
  });
});

async function handle(m: ToWorker): Promise<void> {
  if (m.type === 'parse') {
    // Loaded here, not at start-up: a worker that only embeds never pays for pdf.js or OCR.
    const [{ parseFile }, { chunkDocument }] = await Promise.all([import('../parsers/index.js'), import('../chunkers/index.js')]);
    const pages = Array.isArray(m.parserConfig.pages) ? (m.parserConfig.pages as [number, number][]) : undefined;
    const parsed = await parseFile(m.data, m.filename, { pages });
    send({ type: 'progress', job: m.job, progress: 0.3, message: `Parsed ${m.filename}: ${parsed.blocks.length} blocks${parsed.pages ? `, ${parsed.pages} pages` : ''}.` });
    const { chunks, notes } = chunkDocument(m.method, parsed, { filename: m.filename, parserConfig: m.parserConfig });
    // The full-text rows too (title = the document's name), so the writing thread only writes.
    const terms = chunks.map((c) => ftsTerms(m.filename, c.indexText ?? c.content, c.important_keywords, c.questions));
    send({ type: 'parsed', job: m.job, chunks, terms, notes: notes ?? [], blocks: parsed.blocks.length, pages: parsed.pages, warnings: parsed.warnings ?? [] });
    return;
  }
  if (m.type === 'analyze') {
    send({ type: 'analyzed', job: m.job, terms: m.items.map((i) => ftsTerms(i.title, i.text, i.keywords, i.questions)) });
    return;
  }
  const vectors = await models.embedder(m.modelId).embed(m.texts);
  send({ type: 'embedded', job: m.job, vectors }, vectors.map((v) => v.buffer as ArrayBuffer));
}

send({ type: 'ready' });
