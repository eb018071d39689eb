/**
 * A second process on a store, for the contract suite's concurrency tests (harness.ts inChild):
 * `node --import tsx child.ts <locator JSON> <scenario> <args JSON>` opens the store and runs the
 * scenario, then prints one JSON line.
 */
import { openStore, type StoreLocator } from '../../../src/store/index.js';
import { newId } from '../../../src/util/index.js';
import { chunkOf } from './seed.js';

const [locatorJson, scenario, argsJson] = process.argv.slice(2);
const s = await openStore(JSON.parse(locatorJson!) as StoreLocator);
const args = JSON.parse(argsJson!) as Record<string, unknown>;
/** Starts the work at the same moment as the other children (a time given by the parent). */
const startAt = async () => {
  const at = Number(args.at ?? 0);
  while (Date.now() < at) await new Promise((r) => setTimeout(r, 1));
};
let out: unknown = null;
try {
  await startAt();
  switch (scenario) {
    case 'datasets.create': {
      const t = Date.now();
      const names: string[] = [];
      for (let i = 0; i < Number(args.n); i++) {
        names.push(await s.datasets.create({
          id: newId(), tenant_id: String(args.tenant), name: String(args.name), avatar: null, description: null, embd_id: 'e@F', permission: 'me',
          created_by: String(args.user), parser_id: 'naive', parser_config: '{}', create_time: t, update_time: t,
        }));
      }
      out = names;
      break;
    }
    case 'searchApps.create': {
      const t = Date.now();
      const names: string[] = [];
      for (let i = 0; i < Number(args.n); i++) {
        names.push(await s.searchApps.create({
          id: newId(), tenant_id: String(args.tenant), name: String(args.name), description: '', avatar: '', search_config: '{}', created_by: 'u', create_time: t, update_time: t,
        }));
      }
      out = names;
      break;
    }
    case 'memories.addRaw': {
      let ok = 0;
      for (let i = 0; i < Number(args.n); i++) {
        const now = Date.now();
        const [r] = await s.memories.addRaw([{ memoryId: String(args.memory), queueTask: false, message: {
          message_type: 'raw', source_id: 0, user_id: '', agent_id: String(args.tag), session_id: `s${i}`, content: `${String(args.tag)} message ${i} `.repeat(5),
          vector: null, valid_at: now, invalid_at: null, fifo_at: now,
        } }], now);
        if (r!.ok) ok++;
      }
      out = ok;
      break;
    }
    case 'memories.claimAll': {
      // Takes due tasks until none is left (a claimed one is due a minute later); prints the ids it won.
      const won: number[] = [];
      for (let c; (c = await s.memories.claimTask(Date.now(), 60_000));) won.push(c.task.id);
      out = won;
      break;
    }
    case 'parse.claim': {
      const owner = { pid: process.pid, host: String(args.host) };
      for (const id of args.ids as string[]) await s.parse.claim([id], owner, Date.now());
      await s.parse.heartbeat(owner, Date.now());
      out = process.pid;
      break;
    }
    case 'parse.claimNext': {
      // Claims a few at a time until nothing is left, as parsing nodes do.
      const owner = { pid: process.pid, host: String(args.host) };
      const got: string[] = [];
      for (;;) {
        const ids = await s.parse.claimNext(3, owner, Date.now());
        if (!ids.length) break;
        got.push(...ids);
      }
      out = got;
      break;
    }
    case 'chunks.add': {
      const doc = args.doc as { id: string; dataset_id: string; name: string };
      let added = 0;
      for (let i = 0; i < Number(args.n); i++) {
        if (await s.chunks.add(doc.dataset_id, chunkOf(doc, `${String(args.tag)} chunk ${i}`, Number(args.seed) + i))) added++;
      }
      out = added;
      break;
    }
    case 'chunks.churn': {
      // Adds chunks and removes every third one it added: inserts and deletes for a follower.
      const doc = args.doc as { id: string; dataset_id: string; name: string };
      for (let i = 0; i < Number(args.n); i++) {
        const row = await s.chunks.add(doc.dataset_id, chunkOf(doc, `${String(args.tag)} churn ${i}`, Number(args.seed) + i));
        if (row && i % 3 === 0) await s.chunks.remove(doc, [row.rowid]);
      }
      out = true;
      break;
    }
    default:
      throw new Error(`unknown scenario ${scenario}`);
  }
} finally {
  await s.close();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
