/** A text embedding model. Vectors are L2-normalised so cosine = dot product. */
export interface Embedder {
  /** The model id, `name@factory`. */
  readonly id: string;
  /** Vector dimension, when known before the first call. */
  readonly dim?: number;
  /** Embeds each text; empty strings get a zero vector. */
  embed(texts: string[], opts?: { signal?: AbortSignal }): Promise<Float32Array[]>;
  /** Releases model memory / workers. */
  close?(): Promise<void>;
}
