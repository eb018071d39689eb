/** `ragloom serve --db <url> --port 0 --json` as its own process, for the multi-node tests on PostgreSQL. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

const CLI = fileURLToPath(new URL('../faults/fixtures/cli.mjs', import.meta.url));

export interface ServeNode { proc: ChildProcess; url: string; apiKey: string | null }

/** Starts a node; resolves when it listens. `env` is added to this process's environment. */
export function serve(db: string, env: Record<string, string> = {}): Promise<ServeNode> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), CLI, 'serve', '--db', db, '--port', '0', '--json'],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    proc.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        const j = JSON.parse(line) as { url: string; api_key: string | null };
        resolve({ proc, url: j.url.replace(/\/api\/v1$/, ''), apiKey: j.api_key });
      }
    });
    proc.stderr!.on('data', (c) => (err += c));
    proc.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err.slice(-1500)}`)));
  });
}

/** Stops nodes (SIGTERM) and waits for them to exit. */
export async function stopNodes(nodes: readonly ServeNode[]): Promise<void> {
  for (const n of nodes) if (n.proc.exitCode === null && n.proc.signalCode === null) n.proc.kill('SIGTERM');
  await Promise.all(nodes.map((n) => new Promise((r) => (n.proc.exitCode !== null || n.proc.signalCode !== null ? r(null) : n.proc.once('exit', r)))));
}

/** Documents whose chunk and token counters are not the sums of their chunk rows (none when the store is whole). */
export async function documentsWithWrongCounts(pc: pg.Client): Promise<unknown[]> {
  return (await pc.query(`SELECT d.id FROM document d LEFT JOIN (SELECT document_id, count(*) n, sum(token_num) t FROM chunk GROUP BY document_id) c
    ON c.document_id = d.id WHERE d.chunk_num <> COALESCE(c.n, 0) OR d.token_num <> COALESCE(c.t, 0)`)).rows;
}
