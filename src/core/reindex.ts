/**
 * The background re-index of full-text rows: a dataset whose chunks' rows were analysed otherwise
 * than its `language` setting asks (the setting changed, or the rows predate analyzer version 3,
 * migration 13) gets them re-analysed a slice at a time, each slice its own short transaction, so
 * searches and writes go on in between and every chunk stays searchable throughout (with the
 * analysis it has until its slice comes). Rows whose terms do not change only get their `lang`
 * recorded. When a dataset's rows are all done, its `fts_language` records the setting; a
 * setting changed meanwhile starts that dataset over. Runs in every writable process that opens
 * the store (two processes doing the same rows write the same terms).
 */
import type { Engine } from './engine.js';
import { chunkLanguage, languageSetting, type Lang, type LangSetting } from '../text/index.js';

/** Rows per transaction: ~10–30 ms of analysis and writes, so a search waits at most that long. */
const SLICE_ROWS = 256;
/** After a failure (the file busy in another process), try again this much later. */
const RETRY_MS = 1000;

const byEngine = new WeakMap<Engine, FullTextReindex>();

/** The engine's re-indexer (one per engine), created on first use. */
export function fullTextReindex(e: Engine): FullTextReindex {
  let r = byEngine.get(e);
  if (!r) byEngine.set(e, (r = new FullTextReindex(e)));
  return r;
}

export class FullTextReindex {
  private running: Promise<void> | null = null;
  private again = false;
  /** Rows rewritten since the engine opened (tests, benchmarks). */
  rewritten = 0;

  constructor(private readonly e: Engine) {
    e.onClose(() => this.running ?? undefined);
  }

  /** Starts re-indexing the datasets that need it, unless already under way (then it looks again when done). */
  kick(): void {
    if (this.e.readonly || this.e.isClosed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = null;
      if (this.again && !this.e.isClosed) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Resolves when no re-index is under way (tests, benchmarks). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    const e = this.e;
    for (;;) {
      if (e.isClosed) return;
      let todo: Array<{ id: string; language: string | null; fts_language: string | null }>;
      try {
        todo = (await e.store.datasets.analyses()).filter((d) => languageSetting(d.language) !== d.fts_language);
      } catch {
        return this.retry();
      }
      if (!todo.length) return;
      for (const d of todo) {
        if (!(await this.dataset(d.id, d.language))) return;
      }
    }
  }

  /** Re-indexes one dataset's rows; false when stopped (closed, or failed and retried later). */
  private async dataset(id: string, language: string | null): Promise<boolean> {
    const e = this.e;
    const setting: LangSetting = languageSetting(language);
    const langOf = setting === 'auto'
      ? (text: string, kw: string[], qs: string[]): Lang => chunkLanguage('auto', text, kw, qs)
      : (): Lang => setting;
    let after = 0;
    for (;;) {
      if (e.isClosed) return false;
      try {
        const { last, rewritten } = await e.store.chunks.reindexSlice(id, after, SLICE_ROWS, langOf);
        this.rewritten += rewritten;
        if (last === null) {
          // A setting changed meanwhile leaves fts_language as it was: the next pass starts over.
          await e.store.datasets.markReindexed(id, language, setting);
          return true;
        }
        after = last;
      } catch {
        this.retry();
        return false;
      }
      // Searches and writes waiting for the thread go first.
      await new Promise((r) => setImmediate(r));
    }
  }

  private retry(): void {
    setTimeout(() => this.kick(), RETRY_MS).unref();
  }
}
