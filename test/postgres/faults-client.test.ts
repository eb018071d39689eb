/**
 * PostgreSQL's failures through the public interface (issue 30, item 4), on a cluster of this
 * file's own that it stops, restarts and fails over: the Client uploads and parses a folder while
 * the server restarts; the database is away (the Client and a `ragloom serve` process answer with
 * DB_UNAVAILABLE naming the server, never the password, and recover by themselves); a statement
 * runs into statement_timeout; the primary crashes while Client writes run and a synchronous
 * standby is promoted. Nothing lost, nothing written twice, counters equal to the rows. Each test
 * keeps its waits short through `postgresOptions`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { Client, ApiError, type DataSet } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { openPostgres, StoreClosedError } from '../../src/store/postgres/index.js';
import { pgServer, pgSkipReason, pgUrl, adminQuery, type PgServer } from '../support/postgres.js';
import { launchCluster, restartCluster, startCluster, stopCluster, asPostgresAsync } from '../support/postgres-cluster.js';
import { Endpoint, addSyncStandby } from '../support/pg-endpoint.js';
import { serve, stopNodes, documentsWithWrongCounts, type ServeNode } from '../support/serve-node.js';
import { caught, enc } from '../acceptance/modes.js';

const shared = await pgServer();
const reason = (await pgSkipReason()) || (shared && !shared.dataDir ? 'PostgreSQL fault tests skipped: RAGLOOM_TEST_POSTGRES is an external server they cannot restart' : '');
if (reason) console.warn(reason);

/** Trust authentication ignores it; it is in every URL so that messages can be checked for it. */
const PASSWORD = 'pw-never-shown-9f3';
let own: PgServer;
let standby: { dataDir: string; port: number } | undefined;
const clients: Client[] = [];
const nodes: ServeNode[] = [];
let dbSeq = 0;

beforeAll(async () => {
  if (reason) return;
  own = await launchCluster(process.pid);
}, 120_000);

// Each test's Clients are closed after it (a close is prompt even with the server away: the
// 'closing … is prompt' tests below).
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
});

afterAll(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await stopNodes(nodes);
  if (own) {
    for (const dir of [own.dataDir, standby?.dataDir]) {
      if (!dir) continue;
      try {
        stopCluster(own.bin, dir, 'immediate');
      } catch {
        // stopped already (the crashed primary)
      }
    }
    rmSync(own.home, { recursive: true, force: true });
  }
});

async function database(port = own.port): Promise<{ url: string; name: string }> {
  const name = `kb${dbSeq++}`;
  await adminQuery(own, `CREATE DATABASE ${name}`);
  return { url: pgUrl({ ...own, port, password: PASSWORD }, name), name };
}

function client(url: string, postgresOptions: NonNullable<ConstructorParameters<typeof Client>[0]['postgresOptions']>): Client {
  const c = new Client({ postgres: url, postgresOptions });
  clients.push(c);
  return c;
}

/** Runs `f` on a plain pg connection to `name` (the checks read the rows themselves). */
async function rows<R extends pg.QueryResultRow>(name: string, sql: string, port = own.port): Promise<R[]> {
  const c = new pg.Client({ connectionString: pgUrl({ ...own, port }, name) });
  c.on('error', () => undefined); // a restart ends it with an event; its calls still reject
  await c.connect();
  try {
    return (await c.query<R>(sql)).rows;
  } finally {
    await c.end();
  }
}

/** The invariants of a whole store: counters equal the rows, no chunk twice, no job or claim left. */
async function checkWhole(name: string, port = own.port): Promise<void> {
  const c = new pg.Client({ connectionString: pgUrl({ ...own, port }, name) });
  c.on('error', () => undefined); // a restart ends it with an event; its calls still reject
  await c.connect();
  try {
    expect(await documentsWithWrongCounts(c)).toEqual([]);
    expect((await c.query(`SELECT s.name FROM dataset s LEFT JOIN (SELECT dataset_id, count(*) n, sum(chunk_num) c FROM document GROUP BY dataset_id) d
      ON d.dataset_id = s.id WHERE s.doc_num <> COALESCE(d.n, 0) OR s.chunk_num <> COALESCE(d.c, 0)`)).rows).toEqual([]);
    expect((await c.query('SELECT document_id, content FROM chunk GROUP BY 1, 2 HAVING count(*) > 1')).rows).toEqual([]);
    expect((await c.query("SELECT name FROM document WHERE run = '1'")).rows).toEqual([]);
    expect((await c.query('SELECT document_id FROM parse_job')).rows).toEqual([]);
    expect((await c.query(`SELECT b.sha256 FROM blob b LEFT JOIN blob_part p ON p.content_id = b.content_id
      GROUP BY b.sha256, b.parts, b.size HAVING b.parts <> count(p.n) OR b.size <> COALESCE(sum(length(p.data)), 0)`)).rows).toEqual([]);
    expect((await c.query('SELECT sha256 FROM blob WHERE sha256 NOT IN (SELECT blob_sha256 FROM document)')).rows).toEqual([]);
  } finally {
    await c.end();
  }
}

/** Resolves once the cluster refuses connections (a restart has begun). */
async function serverDown(): Promise<void> {
  for (const until = Date.now() + 30_000; Date.now() < until;) {
    const c = new pg.Client({ connectionString: pgUrl(own, 'postgres'), connectionTimeoutMillis: 500 });
    c.on('error', () => undefined); // a restart ends it with an event; its calls still reject
    const up = await c.connect().then(() => true, () => false);
    await c.end().catch(() => undefined);
    if (!up) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the server never went down');
}

/** A folder of small documents, each with a word of its own. */
const FOLDER = Array.from({ length: 48 }, (_, i) => ({
  display_name: `note-${String(i).padStart(2, '0')}.txt`,
  text: `Note ${i} of the harbour log. The word of this note is tideword${i}. Ships wait for the tide at berth ${i % 7}; the crane lifts ${i * 3} crates before noon.`,
}));

/** Uploads `files`; a COMMIT whose outcome was lost is resolved as its message says: read back, upload again if missing. */
async function upload(ds: DataSet, files: typeof FOLDER): Promise<{ unknown: number }> {
  let unknown = 0;
  for (let left = files; left.length;) {
    try {
      await ds.uploadDocuments(left.map((f) => ({ display_name: f.display_name, blob: enc(f.text) })));
      return { unknown };
    } catch (e) {
      if (!(e instanceof ApiError) || (e.data as { code?: string } | undefined)?.code !== 'COMMIT_UNKNOWN') throw e;
      unknown++;
      const there = new Set((await ds.listDocuments({ page_size: 0 })).map((d) => d.name));
      left = left.filter((f) => !there.has(f.display_name));
    }
  }
  return { unknown };
}

describe.skipIf(!!reason)('PostgreSQL faults through the Client and the server', () => {
  it('PostgreSQL restarted twice while the Client uploads and parses a folder: every document parsed once, no chunk twice, counters equal to rows', async () => {
    const { url, name } = await database();
    const c = client(url, { unreachableMs: 20_000 });
    const ds = await c.createDataset({ name: 'folder' });
    let restarts: Array<Promise<void>> = [];
    for (let i = 0; i < FOLDER.length; i += 8) {
      await upload(ds, FOLDER.slice(i, i + 8));
      if (i === 8) {
        restarts.push(restartCluster(own, 300));
        await serverDown(); // the next batches are sent while it is down: they wait for it
      }
    }
    await Promise.all(restarts);
    restarts = [];
    const docs = await ds.listDocuments({ page_size: 0 });
    expect(docs.map((d) => d.name).sort()).toEqual(FOLDER.map((f) => f.display_name));
    // The second restart lands while the documents are being parsed (at the first progress seen).
    const finished = new Set<string>();
    let finishedAtRestart = -1;
    const done = await ds.parseDocuments(docs.map((d) => d.id), {
      pollMs: 30,
      onProgress: (p) => {
        if (p.run === 'DONE') finished.add(p.document_id);
        if (!restarts.length) {
          finishedAtRestart = finished.size;
          restarts.push(restartCluster(own, 300));
        }
      },
    });
    await Promise.all(restarts);
    expect(restarts).toHaveLength(1);
    expect(finishedAtRestart).toBeLessThan(FOLDER.length);
    expect(done.filter(([, run]) => run !== 'DONE')).toEqual([]);

    // Parsed once each: every document holds exactly the chunks one parse of it makes (the same
    // folder parsed on SQLite), none twice; the counters are the rows'.
    const ref = new Client({ path: ':memory:' });
    try {
      const rds = await ref.createDataset({ name: 'folder' });
      const up = await rds.uploadDocuments(FOLDER.map((f) => ({ display_name: f.display_name, blob: enc(f.text) })));
      await rds.parseDocuments(up.map((d) => d.id), { pollMs: 20 });
      const per = async (d: DataSet) => Object.fromEntries(await Promise.all((await d.listDocuments({ page_size: 0 }))
        .map(async (doc) => [doc.name, (await doc.listChunks({ page_size: 100 })).map((ch) => ch.content).sort()] as const)));
      expect(await per(ds)).toEqual(await per(rds));
    } finally {
      await ref.close();
    }
    await checkWhole(name);
    const [info] = await c.listDatasets({ name: 'folder' });
    const total = (await rows<{ n: number }>(name, 'SELECT count(*)::int AS n FROM chunk'))[0]!.n;
    expect([info!.document_count, info!.chunk_count]).toEqual([FOLDER.length, total]);
    // The same Client searches what was parsed across the restarts (its indexes followed the feed).
    const hits = await c.retrieve({ question: 'tideword37', dataset_ids: [ds.id] });
    expect(hits[0]?.document_keyword).toBe('note-37.txt');
  }, 120_000);

  it('the database away: DB_UNAVAILABLE naming the server (never the password) from the Client and from `ragloom serve`; both recover by themselves', async () => {
    const { url, name } = await database();
    const c = client(url, { unreachableMs: 400 });
    await c.createDataset({ name: 'before' });
    const node = await serve(url, { RAGLOOM_PG_UNREACHABLE_MS: '400' });
    nodes.push(node);
    const rest = async (path: string, init: RequestInit = {}) => {
      const r = await fetch(`${node.url}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${node.apiKey}`, 'content-type': 'application/json' } });
      return { status: r.status, body: (await r.json()) as { code: number; message?: string; data?: unknown } };
    };
    expect((await rest('/datasets')).body.code).toBe(0);
    const where = `PostgreSQL at 127.0.0.1:${own.port}/${name} cannot be reached`;
    stopCluster(own.bin, own.dataDir, 'fast');
    try {
      for (const call of [() => c.listDatasets(), () => c.createDataset({ name: 'while away' })]) {
        const t0 = Date.now();
        const e = await caught(call());
        expect(Date.now() - t0).toBeLessThan(5_000);
        expect(e.code).toBe(500);
        expect(e.message).toContain(where);
        expect(e.message).toMatch(/ragloom reconnects by itself once it is back/);
        expect(e.message).not.toContain(PASSWORD);
        expect(e.data).toMatchObject({ code: 'DB_UNAVAILABLE', target: `127.0.0.1:${own.port}/${name}` });
      }
      // RAGFlow's envelope: HTTP 200, { code: 500, message } naming the server.
      for (const [path, init] of [['/datasets', {}], ['/datasets', { method: 'POST', body: JSON.stringify({ name: 'rest while away' }) }]] as const) {
        const r = await rest(path, init);
        expect(r.status).toBe(200);
        expect(r.body.code).toBe(500);
        expect(r.body.message).toContain(where);
        expect(JSON.stringify(r.body)).not.toContain(PASSWORD);
      }
    } finally {
      startCluster(own.bin, own.dataDir, own.home, own.port);
    }
    // Back: the same Client and the same server process work again, and nothing of the failed writes is there.
    expect((await c.listDatasets()).map((d) => d.name).sort()).toEqual(['before']);
    await c.createDataset({ name: 'after' });
    const listed = await rest('/datasets?page_size=100');
    expect(listed.body.code).toBe(0);
    expect((listed.body.data as Array<{ name: string }>).map((d) => d.name).sort()).toEqual(['after', 'before']);
    expect((await rest('/datasets', { method: 'POST', body: JSON.stringify({ name: 'rest after' }) })).body.code).toBe(0);
    await stopNodes([node]);
    await checkWhole(name);
  }, 90_000);

  it('closing a Client while the database is stopped is prompt: its calls in flight fail with STORE_CLOSED and nothing of them is saved', async () => {
    const { url, name } = await database();
    // Calls would wait 30 s for the server: the close must not.
    const c = new Client({ postgres: url, postgresOptions: { unreachableMs: 30_000 } });
    const ds = await c.createDataset({ name: 'before' });
    stopCluster(own.bin, own.dataDir, 'fast');
    try {
      const calls = [c.createDataset({ name: 'while away' }), ds.uploadDocuments(FOLDER.slice(0, 5).map((f) => ({ display_name: f.display_name, blob: enc(f.text) }))), c.listDatasets()]
        .map((p) => caught(p as Promise<unknown>));
      await new Promise((r) => setTimeout(r, 300)); // each call is waiting for the server now
      const t0 = Date.now();
      await c.close();
      const took = Date.now() - t0;
      console.log(`[close] a Client on a stopped database closed in ${took} ms`);
      expect(took).toBeLessThan(1_500);
      for (const e of await Promise.all(calls)) {
        expect(e.data).toMatchObject({ code: 'STORE_CLOSED', target: `127.0.0.1:${own.port}/${name}` });
        expect(e.message).toBe(`The PostgreSQL store at 127.0.0.1:${own.port}/${name} was closed while this call was waiting for it: nothing of the call was saved.`);
      }
    } finally {
      startCluster(own.bin, own.dataDir, own.home, own.port);
    }
    expect((await rows<{ name: string }>(name, 'SELECT name FROM dataset')).map((r) => r.name)).toEqual(['before']);
    expect(await rows(name, 'SELECT id FROM document')).toEqual([]);
    await checkWhole(name);
  }, 60_000);

  it('closing while the server hangs mid-transaction (frozen): the store and a ragloom server close within a second, the transaction rolls back, the request fails clearly', async () => {
    const { url, name } = await database();
    await rows(name, 'CREATE TABLE scratch (n int)');
    const postmaster = readFileSync(join(own.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]!;
    // SIGSTOP: connections stay open and nothing answers (a host gone from the network, not refusing).
    const freeze = (sig: 'STOP' | 'CONT') => execFileSync('sh', ['-c', `kill -${sig} ${postmaster}; pkill -${sig} -P ${postmaster} || true`]);
    const srv = await startServer({ postgres: url, postgresOptions: { unreachableMs: 30_000 }, port: 0, host: '127.0.0.1' });
    const db = await openPostgres({ connection: url, unreachableMs: 30_000 });
    let inside!: () => void;
    const entered = new Promise<void>((r) => (inside = r));
    let frozen = false;
    // Whatever happens to this test, the cluster is thawed (a frozen server would hang the tests
    // after it, and ignore the watchdog's stop).
    const thaw = setTimeout(() => freeze('CONT'), 20_000);
    try {
      const tx = db.tx(async (t) => {
        await t.run('INSERT INTO scratch VALUES (1)');
        inside();
        await t.run('SELECT pg_sleep(0.3)');
        await t.run('INSERT INTO scratch VALUES (2)');
      }).then(() => null, (e: unknown) => e);
      await entered;
      freeze('STOP');
      frozen = true;
      const request = fetch(`${srv.url}/api/v1/datasets`, { headers: { authorization: `Bearer ${srv.apiKey}` } }).then((r) => r.json() as Promise<{ code: number; message: string }>);
      await new Promise((r) => setTimeout(r, 200)); // the request's call waits on the frozen server
      let t0 = Date.now();
      await db.close();
      const storeMs = Date.now() - t0;
      const err = await tx;
      expect(err).toBeInstanceOf(StoreClosedError);
      t0 = Date.now();
      await srv.close();
      const serverMs = Date.now() - t0;
      console.log(`[close] on a frozen server: the store closed in ${storeMs} ms, a ragloom server in ${serverMs} ms`);
      expect(storeMs).toBeLessThan(1_500);
      expect(serverMs).toBeLessThan(1_500);
      const body = await request;
      expect(body.code).toBe(500);
      expect(body.message).toContain('was closed while this call was waiting for it: nothing of the call was saved');
    } finally {
      clearTimeout(thaw);
      if (frozen) freeze('CONT');
      await db.close();
      await srv.close();
    }
    // The cut transaction rolled back: none of its rows, and none of the store's connections is left on the server.
    expect(await rows(name, 'SELECT n FROM scratch')).toEqual([]);
    for (const until = Date.now() + 10_000; ;) {
      const left = await rows<{ n: number }>(name, `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${name}' AND application_name LIKE 'ragloom@%'`);
      if (left[0]!.n === 0) break;
      expect(Date.now(), 'connections of the closed store still on the server').toBeLessThan(until);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);

  it('a statement past statement_timeout: STATEMENT_TIMEOUT through the Client, nothing of the write saved, the next write goes through', async () => {
    const { url, name } = await database();
    const c = client(url, { statementTimeoutMs: 300 });
    const ds = await c.createDataset({ name: 'timed' });
    const [doc] = await ds.uploadDocuments([{ display_name: 'a.txt', blob: enc('A small file.') }]);
    await doc!.addChunk({ content: 'The first chunk.' });
    // Another session holds the chunk table: the Client's insert waits on its lock until the server cancels it.
    const blocker = new pg.Client({ connectionString: pgUrl(own, name) });
    blocker.on('error', () => undefined); // a restart ends it with an event; its calls still reject
    await blocker.connect();
    await blocker.query('BEGIN; LOCK TABLE chunk IN SHARE MODE');
    try {
      const e = await caught(doc!.addChunk({ content: 'Never saved.' }));
      expect(e.code).toBe(500);
      expect(e.data).toMatchObject({ code: 'STATEMENT_TIMEOUT', target: `127.0.0.1:${own.port}/${name}` });
      expect(e.message).toMatch(/ran longer than statement_timeout \(300 ms\) and was cancelled; nothing of its transaction was saved/);
      expect(e.message).not.toContain(PASSWORD);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect((await doc!.listChunks()).map((ch) => ch.content)).toEqual(['The first chunk.']);
    const [d] = await ds.listDocuments({ id: doc!.id });
    expect(d!.chunk_count).toBe(1);
    await doc!.addChunk({ content: 'The second chunk.' });
    expect((await doc!.listChunks()).map((ch) => ch.content).sort()).toEqual(['The first chunk.', 'The second chunk.']);
    await checkWhole(name);
  }, 60_000);

  // Last: the primary crashes and its standby takes over for good.
  it('failover to a promoted synchronous standby while two Client writers run: every acknowledged write there once, nothing renamed as a duplicate', async () => {
    const { name } = await database();
    standby = await addSyncStandby(own, join(own.home, 'standby'));
    const endpoint = new Endpoint(own.port);
    await endpoint.start();
    try {
      const c = client(pgUrl({ ...own, port: endpoint.port, password: PASSWORD }, name), { unreachableMs: 30_000 });
      const ds = await c.createDataset({ name: 'uploads' });
      const N = 90;
      let failedOver: Promise<void> | undefined;
      let unknown = 0;
      const failover = async () => {
        stopCluster(own.bin, own.dataDir, 'immediate'); // a crash: connections cut, no shutdown checkpoint
        await asPostgresAsync(own.bin, 'pg_ctl', ['-D', standby!.dataDir, '-w', '-t', '60', 'promote']);
        endpoint.moveTo(standby!.port);
      };
      // Writer 1 uploads files; writer 2 creates datasets (a retried create would show up renamed, "ds-7(1)").
      // A writer's failure names the write it stopped at (and whether the failover had begun).
      const at = (what: string) => (e: unknown) => {
        throw new Error(`${what} (failover ${failedOver ? 'begun' : 'not begun'}): ${(e as Error).message} ${JSON.stringify((e as ApiError).data ?? '')}`, { cause: e });
      };
      const uploads = (async () => {
        for (let k = 0; k < N; k++) {
          unknown += (await upload(ds, [{ display_name: `f${k}.txt`, text: `File ${k}: bytes of its own, ${'x'.repeat(k)}.` }]).catch(at(`upload f${k}.txt`))).unknown;
          if (k === 30) failedOver = failover();
        }
      })();
      const creates = (async () => {
        for (let k = 0; k < N; k++) {
          for (;;) {
            try {
              await c.createDataset({ name: `ds-${k}` });
              break;
            } catch (e) {
              if (!(e instanceof ApiError) || (e.data as { code?: string } | undefined)?.code !== 'COMMIT_UNKNOWN') at(`create ds-${k}`)(e);
              unknown++;
              // RAGFlow's list by a name that matches nothing is an error ("lacks permission"): not there, create again.
              const there = await c.listDatasets({ name: `ds-${k}` }).then((l) => l.length > 0, (e2: unknown) => {
                if (e2 instanceof ApiError && e2.message.includes('lacks permission')) return false;
                throw e2;
              });
              if (there) break;
            }
          }
        }
      })();
      await Promise.all([uploads, creates]);
      await failedOver;
      expect(failedOver).toBeDefined();
      expect((await ds.listDocuments({ page_size: 0 })).map((d) => d.name).sort()).toEqual(Array.from({ length: N }, (_, k) => `f${k}.txt`).sort());
      const names = (await c.listDatasets({ page_size: 1000 })).map((d) => d.name).sort();
      expect(names).toEqual(['uploads', ...Array.from({ length: N }, (_, k) => `ds-${k}`)].sort());
      // The rows are on the promoted standby, whole.
      expect(await rows(name, 'SELECT pg_is_in_recovery() AS standby', standby.port)).toEqual([{ standby: false }]);
      await checkWhole(name, standby.port);
      if (unknown) console.log(`failover: ${unknown} writes had their COMMIT cut and were read back`);
    } finally {
      for (const c of clients.splice(0)) await c.close().catch(() => undefined);
      await endpoint.stop();
    }
  }, 120_000);
});
