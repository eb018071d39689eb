/**
 * The term indexes of a search's datasets (one TermIndex each, `new TermIndex(reader, dataset)`)
 * read as one store-wide index would be over those datasets' chunks, number for number:
 *
 * - document frequencies are FTS5's, over every chunk of the store (`ftsDocFreq`: the store's
 *   FTS5 on SQLite, the node's FTS5 copy on PostgreSQL), so the idf — and with it every score —
 *   does not depend on which datasets a node holds;
 * - a token here is this view's id of the query term; each part looks the term up in its own
 *   dictionary (term ids differ per index);
 * - top rows: each part's k best (exact scores, ties to the lower rowid) merged; every match:
 *   the parts' matches in rowid order; cross-scores: per row, from the part holding it;
 * - RM3's relevance model adds the feedback rows' terms in the feedback's order, as the
 *   store-wide index does, so its sums are the same to the last bit.
 *
 * Parts hold disjoint rows (a chunk belongs to one dataset).
 */
import type { PageChunk, SearchReader } from '../store/index.js';
import { bestTerms, ftsDocFreq, type TextQuery } from './fulltext.js';
import type { TermHit, TermIndex, TermSource } from './term-index.js';

export class DatasetTerms implements TermSource {
  private readonly ids = new Map<string, number>();
  private readonly strs: string[] = [];

  /** `parts`: each dataset's built and synced index (at least one). */
  constructor(private readonly reader: SearchReader, readonly parts: readonly TermIndex[]) {
    if (parts.length === 0) throw new Error('DatasetTerms needs at least one dataset index');
  }

  /** This view's token of a query term: ≥ 0, or −2 when FTS5 reads it as several tokens. */
  queryToken(term: string): number {
    // Every part tokenises with the same tokenizer: a phrase in one is a phrase in all.
    if (this.parts[0]!.queryToken(term) === -2) return -2;
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.strs.length;
      this.ids.set(term, id);
      this.strs.push(term);
    }
    return id;
  }

  /** FTS5's document frequency of the token's term, over the whole store. */
  docFreq(token: number): number {
    return token < 0 ? 0 : ftsDocFreq(this.reader, this.strs[token]!);
  }

  dfOf(term: string): number | undefined {
    const t = this.queryToken(term);
    return t === -2 ? undefined : this.docFreq(t);
  }

  ftsIdf(rows: number, hits: number): number {
    return this.parts[0]!.ftsIdf(rows, hits);
  }

  /** `phrases` in one part's ids. */
  private tokensOf(part: TermIndex, phrases: Int32Array): Int32Array {
    return Int32Array.from(phrases, (v) => (v < 0 ? -1 : part.queryToken(this.strs[v]!)));
  }

  top(phrases: Int32Array, idf: Float64Array, avgdl: number, k: number, accept: (rowid: number) => boolean): TermHit[] {
    if (this.parts.length === 1) return this.parts[0]!.top(this.tokensOf(this.parts[0]!, phrases), idf, avgdl, k, accept);
    const all = this.parts.flatMap((p) => p.top(this.tokensOf(p, phrases), idf, avgdl, k, accept));
    all.sort((a, b) => b.score - a.score || a.rowid - b.rowid);
    return all.slice(0, Math.max(0, k));
  }

  all(phrases: Int32Array, idf: Float64Array, avgdl: number): { rowids: Float64Array; scores: Float64Array } {
    if (this.parts.length === 1) return this.parts[0]!.all(this.tokensOf(this.parts[0]!, phrases), idf, avgdl);
    const got = this.parts.map((p) => p.all(this.tokensOf(p, phrases), idf, avgdl));
    const order: Array<[number, number]> = [];
    got.forEach((g, j) => g.rowids.forEach((_, i) => order.push([j, i])));
    order.sort((x, y) => got[x[0]]!.rowids[x[1]]! - got[y[0]]!.rowids[y[1]]!);
    return {
      rowids: Float64Array.from(order, ([j, i]) => got[j]!.rowids[i]!),
      scores: Float64Array.from(order, ([j, i]) => got[j]!.scores[i]!),
    };
  }

  /** TermIndex.scoreRows over the parts; entries in the order of `rowids`, as one index gives them. */
  scoreRows(q: TextQuery, rowids: number[]): Map<number, number> {
    if (this.parts.length === 1) return this.parts[0]!.scoreRows(q, rowids);
    const got = this.parts.map((p) => p.scoreRows(q, rowids));
    const out = new Map<number, number>();
    for (const r of rowids) {
      for (const g of got) {
        const v = g.get(r);
        if (v !== undefined) {
          out.set(r, v);
          break;
        }
      }
    }
    return out;
  }

  /** TermIndex.relevanceModel over the parts' rows: the same additions in the same order. */
  relevanceModel(feedback: Array<[rowid: number, score: number]>, terms: number): Array<[string, number]> | null {
    if (this.parts.length === 1) return this.parts[0]!.relevanceModel(feedback, terms);
    const held = feedback.filter(([r]) => this.holder(r) !== undefined);
    if (held.length === 0) return null;
    const mass = held.reduce((a, [, s]) => a + Math.max(0, s), 0);
    if (mass <= 0) return null;
    const acc = new Map<string, number>();
    for (const [r, score] of held) {
      const cols = this.holder(r)!.rowTerms([r]).get(r)!;
      const len = cols.reduce((a, c) => a + c.length, 0);
      if (!len || score <= 0) continue;
      const wgt = score / mass / len;
      for (const c of cols) for (const t of c) acc.set(t, (acc.get(t) ?? 0) + wgt);
    }
    return bestTerms(acc, terms);
  }

  private holder(rowid: number): TermIndex | undefined {
    for (const p of this.parts) if (p.documentOf(rowid) !== undefined) return p;
    return undefined;
  }

  documentOf(rowid: number): string | undefined {
    return this.holder(rowid)?.documentOf(rowid);
  }

  documentNameOf(rowid: number): string | undefined {
    return this.holder(rowid)?.documentNameOf(rowid);
  }

  /** TermIndex.pageOf, from the dataset's index that holds the chunk. */
  pageOf(rowid: number): PageChunk | undefined {
    return this.holder(rowid)?.pageOf(rowid);
  }

  contentTerms(rowid: number): string[] | undefined {
    return this.holder(rowid)?.contentTerms(rowid);
  }
}
