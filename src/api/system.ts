/**
 * RAGFlow's `/system/*` routes (system_api.py, stats_api.py) over one ragloom store: liveness,
 * version, the health of the parts ragloom has (the SQLite store, its search indexes, the file
 * blobs, the parse queue), the web app's config, usage statistics; and the other small
 * instance-wide reads (`/plugin/tools`, `/langfuse/api-key`).
 */
import type { Engine, Ctx, ParseQueue } from '../core/index.js';
import { formatDateTime, VERSION as PACKAGE_VERSION } from '../util/index.js';
import { HTTP_STATUS_KEY, RESULT_MESSAGE_KEY } from './routes.js';

type P = Record<string, unknown>;

/** `GET /system/ping`: `pong` (text). */
export const ping = (): string => 'pong';

/** `GET /system/version`: ragloom's version, and the RAGFlow REST interface it serves. */
export const version = (): string => `ragloom-${PACKAGE_VERSION} (RAGFlow v0.25.6 REST API)`;

/** `GET /system/config`: as a RAGFlow with registration and password login turned off (ragloom has API keys only). */
export const config = (): P => ({ registerEnabled: 0, disablePasswordLogin: true });

async function timed(check: () => Promise<void>): Promise<{ ok: boolean; elapsed: string; error?: string }> {
  const t0 = performance.now();
  try {
    await check();
    return { ok: true, elapsed: (performance.now() - t0).toFixed(1) };
  } catch (err) {
    return { ok: false, elapsed: (performance.now() - t0).toFixed(1), error: err instanceof Error ? err.message : String(err) };
  }
}

async function checks(e: Engine) {
  return {
    database: await timed(() => e.store.probe('records')),
    docEngine: await timed(() => e.store.probe('search')),
    storage: await timed(() => e.store.probe('files')),
  };
}

const colour = (c: { ok: boolean; elapsed: string; error?: string }, extra: P): P =>
  ({ ...extra, status: c.ok ? 'green' : 'red', elapsed: c.elapsed, ...(c.error ? { error: c.error } : {}) });

/**
 * `GET /system/status`: RAGFlow's shape for the parts ragloom has — `doc_engine` (SQLite FTS5 and
 * vectors), `storage` (blobs in the same file), `database` — and the parse queue as the one
 * `task_executor_heartbeats` entry. There is no Redis, so no `redis` key.
 */
export async function status(e: Engine, q: ParseQueue): Promise<P> {
  const c = await checks(e);
  const now = Date.now();
  return {
    doc_engine: colour(c.docEngine, { type: 'sqlite' }),
    storage: colour(c.storage, { storage: 'sqlite' }),
    database: colour(c.database, { database: 'sqlite' }),
    task_executor_heartbeats: {
      [`ragloom-${process.pid}`]: [{ name: `ragloom-${process.pid}`, now: formatDateTime(now), pending: q.pendingCount, done: q.stats.documents, lag: 0 }],
    },
  };
}

/** `GET /system/healthz`: `{db, doc_engine, storage, status}` as ok/nok; HTTP 500 when one is not ok. */
export async function healthz(e: Engine): Promise<P> {
  const c = await checks(e);
  const ok = (x: { ok: boolean }) => (x.ok ? 'ok' : 'nok');
  const all = c.database.ok && c.docEngine.ok && c.storage.ok;
  const out: P = { db: ok(c.database), doc_engine: ok(c.docEngine), storage: ok(c.storage), status: all ? 'ok' : 'nok' };
  const meta = Object.fromEntries(([['db', c.database], ['doc_engine', c.docEngine], ['storage', c.storage]] as const)
    .filter(([, x]) => !x.ok).map(([k, x]) => [k, { error: x.error, elapsed: x.elapsed }]));
  if (Object.keys(meta).length) out._meta = meta;
  Object.defineProperty(out, HTTP_STATUS_KEY, { value: all ? 200 : 500, enumerable: false });
  return out;
}

const DAY = 86_400_000;
function parseDate(s: string, end: boolean): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(s.trim());
  if (!m) return Number.NaN;
  const t = new Date(+m[1]!, +m[2]! - 1, +m[3]!, +(m[4] ?? (end ? 23 : 0)), +(m[5] ?? (end ? 59 : 0)), +(m[6] ?? (end ? 59 : 0))).getTime();
  return t;
}

/**
 * `GET /system/stats?from_date&to_date[&canvas_id]`: per day, sessions (`pv`), distinct users
 * (`uv`), `speed` (tokens per second), `tokens` (thousands), average `round`s and `thumb_up`s of
 * the tenant's agent sessions (RAGFlow counts its API conversations; ragloom keeps these figures
 * for agent sessions). Dates `YYYY-MM-DD[ HH:MM:SS]`; default the last 7 days.
 */
export async function stats(e: Engine, ctx: Ctx, q: P): Promise<P> {
  const now = new Date();
  const from = typeof q.from_date === 'string' ? parseDate(q.from_date, false) : new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime() - 7 * DAY;
  const to = typeof q.to_date === 'string' ? parseDate(q.to_date, true) : now.getTime();
  const out: Record<string, Array<[string, number]>> = { pv: [], uv: [], speed: [], tokens: [], round: [], thumb_up: [] };
  if (!Number.isFinite(from) || !Number.isFinite(to)) return out;
  const rows = await e.store.agents.sessionFigures(ctx.tenantId, from, to);
  const days = new Map<string, typeof rows>();
  for (const r of rows) {
    const d = new Date(r.t);
    const key = formatDateTime(new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime());
    days.set(key, [...(days.get(key) ?? []), r]);
  }
  for (const [dt, list] of days) {
    const tokens = list.reduce((n, r) => n + r.tokens, 0);
    const duration = list.reduce((n, r) => n + r.duration, 0);
    out.pv!.push([dt, list.length]);
    out.uv!.push([dt, new Set(list.map((r) => r.user_id)).size]);
    out.speed!.push([dt, tokens / (duration + 0.1)]);
    out.tokens!.push([dt, tokens / 1000]);
    out.round!.push([dt, list.reduce((n, r) => n + r.round, 0) / list.length]);
    out.thumb_up!.push([dt, list.reduce((n, r) => n + r.thumb_up, 0)]);
  }
  return out;
}

/** `GET /plugin/tools`: the LLM tool plugins loaded — ragloom loads none. */
export const pluginTools = (): unknown[] => [];

/** `GET` / `DELETE /langfuse/api-key`: ragloom records no Langfuse keys: RAGFlow's answer for none, `{code: 0, message, data: null}`. */
export function langfuseNone(): { data: null } {
  return Object.defineProperty({ data: null }, RESULT_MESSAGE_KEY, { value: 'Have not record any Langfuse keys.', enumerable: false });
}
