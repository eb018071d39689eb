/**
 * A loopback TCP proxy standing in for the endpoint a managed PostgreSQL service gives (a name
 * that follows the primary): it forwards to whichever port is `target`, and moving it drops the
 * connections to the old one, as a failover does.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { adminQuery, type PgServer } from './postgres.js';
import { asPostgresAsync, freePort, startCluster } from './postgres-cluster.js';

export class Endpoint {
  private readonly open = new Set<Socket>();
  private server!: Server;
  port = 0;
  constructor(public target: number) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.open.add(s);
        s.on('error', () => undefined);
        s.on('close', () => {
          this.open.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  moveTo(port: number): void {
    this.target = port;
    for (const s of this.open) s.destroy();
  }

  async stop(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

/**
 * Adds a synchronous standby to `primary` (pg_basebackup, streaming replication) in `dataDir`, on a
 * port of its own: a commit returns once the standby has it, so a failover loses no acknowledged write.
 */
export async function addSyncStandby(primary: PgServer, dataDir: string): Promise<{ dataDir: string; port: number }> {
  const port = await freePort();
  await asPostgresAsync(primary.bin, 'pg_basebackup', ['-D', dataDir, '-R', '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '--no-sync', '--checkpoint=fast']);
  startCluster(primary.bin, dataDir, primary.home, port);
  await adminQuery(primary, "ALTER SYSTEM SET synchronous_standby_names = '*'");
  await adminQuery(primary, 'SELECT pg_reload_conf()');
  for (let i = 0; ; i++) {
    const r = await adminQuery<{ s: string }>(primary, 'SELECT sync_state AS s FROM pg_stat_replication');
    if (r[0]?.s === 'sync') break;
    if (i > 200) throw new Error('the standby never became synchronous');
    await new Promise((res) => setTimeout(res, 50));
  }
  return { dataDir, port };
}
