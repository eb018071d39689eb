/**
 * An ingest worker thread: parses and chunks files, analyses chunks for the full-text index, and
 * runs CPU-bound embedding models, so the caller's thread stays free to write. Stateless between
 * jobs except for loaded models (and the analyzer's word memo).
 */
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import type { FailedItem, FromWorker, ParsedItem, ParseItem, ToWorker } from './protocol.js';
import { ModelRegistry } from '../../embed/index.js';
import { ftsTerms, chunkLanguage } from '../../text/index.js';
import { sha256Hex } from '../../util/index.js';

const port = parentPort!;
const models = new ModelRegistry();
const send = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

// Loaded at the first parse, not at start-up: a worker that only embeds never pays for pdf.js or
// OCR. Once: an import() per file costs a module resolution each (~0.1 ms; more under a loader).
const loadModules = () => Promise.all([import('../parsers/index.js'), import('../chunkers/index.js')]);
let modules: ReturnType<typeof loadModules> | undefined;

// Jobs run one at a time, in the order they came (the caller posts the next before this one
// ends); a job dropped before its turn is skipped.
let line: Promise<void> = Promise.resolve();
const dropped = new Set<number>();
port.on('message', (m: ToWorker) => {
  if (m.type === 'drop') {
    dropped.add(m.job);
    return;
  }
  line = line.then(() => {
    if (dropped.delete(m.job)) return;
    return handle(m).catch((e: unknown) => {
      send({ type: 'error', job: m.job, message: e instanceof Error ? e.message : String(e), parseError: (e as Error)?.name === 'ParseError' });
    });
  });
});

async function handle(m: Exclude<ToWorker, { type: 'drop' }>): Promise<void> {
  if (m.type === 'parse') {
    await (modules ??= loadModules());
    send({ type: 'started', job: m.job });
    const results: Array<ParsedItem | FailedItem> = [];
    for (const item of m.items) {
      // One file's failure is its own: the others of the job go on.
      results.push(await parseOne(m.job, item, m.items.length === 1).catch((e: unknown) => ({ error: e instanceof Error ? e.message : String(e) })));
    }
    send({ type: 'parsed', job: m.job, results });
    return;
  }
  if (m.type === 'analyze') {
    send({ type: 'analyzed', job: m.job, terms: m.items.map((i) => ftsTerms(i.title, i.text, i.keywords, i.questions, i.lang)) });
    return;
  }
  const t0 = performance.now();
  const vectors = await models.embedder(m.modelId).embed(m.texts);
  const dim = vectors[0]?.length ?? 0;
  const flat = new Float32Array(dim * vectors.length);
  vectors.forEach((v, i) => flat.set(v, i * dim));
  send({ type: 'embedded', job: m.job, flat, dim, ms: performance.now() - t0 }, [flat.buffer]);
}

async function parseOne(job: number, m: ParseItem, progress: boolean): Promise<ParsedItem> {
  const t0 = performance.now();
  const [{ parseFile }, { chunkDocument, chunkTokenCount }] = await (modules ??= loadModules());
  const pages = Array.isArray(m.parserConfig.pages) ? (m.parserConfig.pages as [number, number][]) : undefined;
  const parsed = await parseFile(m.data, m.filename, { pages });
  if (progress) send({ type: 'progress', job, progress: 0.3, message: `Parsed ${m.filename}: ${parsed.blocks.length} blocks${parsed.pages ? `, ${parsed.pages} pages` : ''}.` });
  const { chunks, notes } = chunkDocument(m.method, parsed, { filename: m.filename, parserConfig: m.parserConfig });
  // The full-text rows, token counts and embedding-cache keys too (title = the document's name).
  const langs = chunks.map((c) => chunkLanguage(m.lang ?? 'en', c.indexText ?? c.content, c.important_keywords, c.questions));
  const terms = chunks.map((c, i) => ftsTerms(m.filename, c.indexText ?? c.content, c.important_keywords, c.questions, langs[i]));
  const tokens = chunks.map(chunkTokenCount);
  const shas = [sha256Hex(m.filename), ...chunks.map((c) => sha256Hex(c.embedText ?? c.content))];
  return { chunks, terms, langs, tokens, shas, notes: notes ?? [], blocks: parsed.blocks.length, pages: parsed.pages, warnings: parsed.warnings ?? [], ms: performance.now() - t0 };
}

send({ type: 'ready' });
