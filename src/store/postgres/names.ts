/**
 * Names that must stay unique when many processes create at once. On SQLite one writer at a time
 * makes "check, then insert" enough; on PostgreSQL two processes can both check before either
 * inserts, so the unique indexes of the schema (migrations.ts) decide, and a refusal is turned into
 * the reference's error by the caller (api/): `nameClash` says which index refused.
 *
 * Where RAGFlow renames instead of refusing (a second dataset or memory "kb" becomes "kb(1)", a
 * second upload "a.txt" becomes "a(1).txt"), `insertUnderFreeName` inserts under the first free
 * name, moving on to the next when a concurrent creator took it first: each attempt runs in a
 * savepoint, so a refusal undoes that attempt only, and the creator that lost the race waits for
 * the winner's commit (the unique index makes it) and then takes the next name.
 */
import { duplicateName } from '../../util/index.js';
import type { PgTx } from './db.js';

/** The unique indexes of names, and what each keeps unique. */
export const NAME_INDEXES = Object.freeze({
  dataset_name_unique: 'dataset names of a tenant (live datasets, case-insensitive)',
  chat_name_unique: 'chat assistant names of a tenant (live ones, case-insensitive)',
  memory_name_unique: 'memory names of a tenant (case-insensitive)',
  agent_title_unique: 'agent titles of a tenant per canvas category (case-insensitive)',
  document_name_unique: 'document names of a dataset (exact)',
  user_email: 'users\' e-mail addresses (case-insensitive)',
} as const);

export type NameIndex = keyof typeof NAME_INDEXES;

/** The name index that refused a row, or undefined when `e` is not such a refusal. */
export function nameClash(e: unknown): NameIndex | undefined {
  const f = e && typeof e === 'object' ? (e as { code?: unknown; constraint?: unknown }) : {};
  return f.code === '23505' && typeof f.constraint === 'string' && Object.hasOwn(NAME_INDEXES, f.constraint) ? (f.constraint as NameIndex) : undefined;
}

/** SQLite's NOCASE: ASCII letters folded, nothing else (ragloom_nocase in the schema). */
export const foldAscii = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

let savepoints = 0;

/**
 * Inserts under `wanted`, or the next free name in RAGFlow's order (`n`, `n(1)`, `n(2)`…; for
 * files before the extension), in the caller's transaction. `taken` holds the names in use
 * (folded as the index compares them, `fold`), read by the caller in the same transaction;
 * `insert` writes the row under a name. Returns the name written.
 */
export async function insertUnderFreeName(
  tx: PgTx,
  index: NameIndex,
  wanted: string,
  taken: Set<string>,
  insert: (name: string) => Promise<void>,
  opts: { isFile?: boolean; fold?: (s: string) => string } = {},
): Promise<string> {
  const fold = opts.fold ?? foldAscii;
  for (;;) {
    const name = duplicateName(wanted, (n) => taken.has(fold(n)), opts.isFile);
    const sp = `ragloom_name_${++savepoints}`;
    await tx.run(`SAVEPOINT ${sp}`);
    try {
      await insert(name);
      await tx.run(`RELEASE SAVEPOINT ${sp}`);
      return name;
    } catch (e) {
      await tx.run(`ROLLBACK TO SAVEPOINT ${sp}`);
      if (nameClash(e) !== index) throw e;
      taken.add(fold(name)); // a concurrent creator committed it: try the next
    }
  }
}
