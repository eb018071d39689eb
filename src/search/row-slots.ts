/**
 * rowid → slot for the in-memory indexes. Row ids are dense (they only grow from 1), so an
 * array indexed by rowid replaces a Map: a search looks rows up thousands of times, and a Map
 * of 100k entries costs ~150 ns a look-up in cache misses, the array one load. Ids far past
 * the rows held (a sparse table) go to a Map instead, so memory stays proportional to the rows.
 */
export class RowSlots {
  /** slot + 1 per rowid; 0 = absent */
  private a = new Int32Array(1024);
  private readonly far = new Map<number, number>();
  private count = 0;

  get(rowid: number): number | undefined {
    if (rowid >= 0 && rowid < this.a.length) {
      const v = this.a[rowid]!;
      return v === 0 ? undefined : v - 1;
    }
    return this.far.get(rowid);
  }

  set(rowid: number, slot: number): void {
    if (rowid >= 0 && rowid >= this.a.length && Number.isInteger(rowid) && rowid < 4 * (this.count + 1_000_000)) {
      const b = new Int32Array(Math.max(rowid + 1, Math.ceil(this.a.length * 1.5)));
      b.set(this.a);
      this.a = b;
    }
    if (rowid >= 0 && rowid < this.a.length) {
      if (this.a[rowid] === 0) this.count++;
      this.a[rowid] = slot + 1;
    } else {
      if (!this.far.has(rowid)) this.count++;
      this.far.set(rowid, slot);
    }
  }

  delete(rowid: number): void {
    if (rowid >= 0 && rowid < this.a.length) {
      if (this.a[rowid] !== 0) this.count--;
      this.a[rowid] = 0;
    } else if (this.far.delete(rowid)) this.count--;
  }

  clear(): void {
    this.a.fill(0);
    this.far.clear();
    this.count = 0;
  }
}
