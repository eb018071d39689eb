export interface ModelId {
  name: string;
  factory: string;
}

/** Splits `name@factory` at the last `@` (names such as `BAAI/bge@v1` may hold one). */
export function parseModelId(id: string): ModelId | null {
  const at = id.lastIndexOf('@');
  if (at <= 0 || at === id.length - 1) return null;
  return { name: id.slice(0, at), factory: id.slice(at + 1) };
}

