import { PgDb, type PostgresOptions } from './db.js';
import { migratePostgres } from './migrations.js';

/**
 * Opens a ragloom store on PostgreSQL: connects (the database must exist: DatabaseMissingError
 * names it otherwise) and brings an empty or older database to the current schema.
 */
export async function openPostgres(options: PostgresOptions): Promise<PgDb> {
  const db = await PgDb.connect(options);
  try {
    await migratePostgres(db, options.targetVersion);
    return db;
  } catch (e) {
    await db.close();
    throw e;
  }
}
