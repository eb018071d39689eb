/**
 * rowid → slot for the in-memory indexes. Row ids are dense (they only grow from 1), so an
 * array indexed by rowid replaces a Map: a search looks rows up thousands of times, and a Map
 * of 100k entries costs ~150 ns a look-up in cache misses, the array one load. The array starts
 * at the first rowid set (a dataset's index holds a late range of ids); ids before it, or far
 * past the rows held (a sparse range: datasets written in turns), go to a Map instead, so memory
 * stays proportional to the rows.
 */
export class RowSlots {
  /** slot + 1 per rowid − base; 0 = absent */
  private a = new Int32Array(1024);
  /** the rowid of a[0] (the first rowid set while empty) */
  private base = -1;
  private readonly far = new Map<number, number>();
  private count = 0;

  get(rowid: number): number | undefined {
    const i = rowid - this.base;
    if (this.base >= 0 && i >= 0 && i < this.a.length) {
      const v = this.a[i]!;
      return v === 0 ? undefined : v - 1;
    }
    return this.far.get(rowid);
  }

  set(rowid: number, slot: number): void {
    if (this.base < 0 && Number.isInteger(rowid) && rowid >= 0) this.base = rowid;
    const i = rowid - this.base;
    if (this.base >= 0 && i >= this.a.length && Number.isInteger(rowid) && i < 4 * (this.count + 65_536)) {
      const b = new Int32Array(Math.max(i + 1, Math.ceil(this.a.length * 1.5)));
      b.set(this.a);
      this.a = b;
    }
    if (this.base >= 0 && i >= 0 && i < this.a.length) {
      if (this.a[i] === 0) this.count++;
      this.a[i] = slot + 1;
    } else {
      if (!this.far.has(rowid)) this.count++;
      this.far.set(rowid, slot);
    }
  }

  delete(rowid: number): void {
    const i = rowid - this.base;
    if (this.base >= 0 && i >= 0 && i < this.a.length) {
      if (this.a[i] !== 0) this.count--;
      this.a[i] = 0;
    } else if (this.far.delete(rowid)) this.count--;
  }

  clear(): void {
    this.a.fill(0);
    this.far.clear();
    this.count = 0;
    this.base = -1;
  }

  /** Bytes held: the array, and ~40 per id in the Map (V8's hash table entries). */
  get bytes(): number {
    return this.a.byteLength + this.far.size * 40;
  }
}
