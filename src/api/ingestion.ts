/**
 * A dataset's ingestion as RAGFlow reports it (dataset_api.py, task_api.py, agent_api.rerun):
 * the parse summary, the ingestion logs — one per parse of a document, from the parse log
 * (src/store/parse-log.ts) — a parse's task (its log id) to cancel, and the re-run of a logged
 * parse. RAGFlow's dataset-level logs (knowledge graph, RAPTOR, mind map) are always empty here:
 * ragloom builds none of those.
 */
import type { Engine, Ctx, ParseQueue } from '../core/index.js';
import { visibleDataset, ownedDataset, getDocument, RUN } from '../core/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { pyStr } from './pyfmt.js';
import { ORDER_FIELDS } from './listing.js';
import type { ParseLogRow, ParseLogOrder } from '../store/index.js';
import { formatDateTime } from '../util/index.js';
import { cancelParsing, startParsing } from './parse.js';

type P = Record<string, unknown>;
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};

/** `GET /datasets/{id}/ingestions/summary`: the dataset's counters and its documents by parse state. */
export async function ingestionSummary(e: Engine, ctx: Ctx, datasetId: string): Promise<P> {
  const kb = await visibleDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_LACKS_PERMISSION', ctx.tenantId, datasetId);
  const status: Record<string, number> = { unstart_count: 0, running_count: 0, cancel_count: 0, done_count: 0, fail_count: 0 };
  const names = ['unstart_count', 'running_count', 'cancel_count', 'done_count', 'fail_count'];
  for (const [run, n] of Object.entries((await e.store.datasets.runCounts([kb.id])).get(kb.id) ?? {})) {
    const k = names[Number(run)];
    if (k) status[k] = n;
  }
  return { doc_num: kb.doc_num, chunk_num: kb.chunk_num, token_num: kb.token_num, status };
}

const dt = (ms: number | null) => (ms === null ? null : formatDateTime(ms));

/** A parse log as RAGFlow's file logs show one. */
function fileLog(r: ParseLogRow): P {
  return {
    id: r.id, document_id: r.document_id, tenant_id: r.tenant_id, kb_id: r.dataset_id, pipeline_id: null, pipeline_title: r.parser_id,
    parser_id: r.parser_id, document_name: r.document_name, document_suffix: r.document_suffix, document_type: r.document_type,
    source_from: r.source_from, progress: r.progress, progress_msg: r.progress_msg, process_begin_at: dt(r.process_begin_at),
    process_duration: r.process_duration, dsl: {}, task_type: 'Parse', operation_status: r.operation_status, avatar: null, status: '1',
    create_time: r.create_time, create_date: formatDateTime(r.create_time), update_time: r.update_time, update_date: formatDateTime(r.update_time),
  };
}

/** Python `int()` of a query value, failing as this route does: 101 with the ValueError's text. */
function intQuery(v: unknown, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  const s = pyStr(v);
  if (!/^\s*[+-]?\d+\s*$/.test(s)) throw new ApiError(RetCode.ARGUMENT_ERROR, `invalid literal for int() with base 10: '${s}'`);
  return Number(s.trim());
}

/**
 * `GET /datasets/{id}/ingestions`: `{total, logs}`. `log_type=file` lists the documents' parses
 * (newest first by default; `keywords` in the document name, `operation_status` codes,
 * `create_date_from`/`to`, page/page_size 0 = all); `log_type=dataset` (the default) lists the
 * dataset's own tasks, of which ragloom has none. What RAGFlow's query would fail on (an unknown
 * `orderby`, a negative page) answers its 102 `Internal server error`.
 */
export async function ingestionLogs(e: Engine, ctx: Ctx, datasetId: string, q: P): Promise<{ total: number; logs: P[] }> {
  const page = intQuery(q.page, 0);
  const size = intQuery(q.page_size, 0);
  const orderby = q.orderby === undefined ? 'create_time' : pyStr(q.orderby);
  const desc = q.desc === undefined ? true : q.desc !== false && pyStr(q.desc).toLowerCase() !== 'false';
  const kb = await visibleDataset(e, ctx, datasetId);
  if (!kb) dataError('No authorization.');
  const logType = q.log_type === undefined ? 'dataset' : pyStr(q.log_type);
  if (logType !== 'dataset' && logType !== 'file') dataError('Invalid "log_type", expected "dataset" or "file"');
  const col = (ORDER_FIELDS.PipelineOperationLog as Record<string, string>)[orderby];
  if (!col || !Object.prototype.hasOwnProperty.call(ORDER_FIELDS.PipelineOperationLog, orderby)) dataError('Internal server error');
  if (page && size && (page < 0 || size < 0)) dataError('Internal server error');
  if (logType === 'dataset') return { total: 0, logs: [] };
  const statuses = Array.isArray(q.operation_status) ? q.operation_status.map((x) => pyStr(x)) : [];
  let rows = await e.store.parse.logs(kb!.id, {
    keywords: typeof q.keywords === 'string' && q.keywords ? q.keywords.toLowerCase() : undefined, orderby: col as ParseLogOrder, desc,
  });
  // Filters on what a row reads as now (an open row of a stopped parse reads as its end state).
  if (statuses.length) rows = rows.filter((r) => statuses.includes(r.operation_status));
  if (typeof q.create_date_from === 'string' && q.create_date_from) rows = rows.filter((r) => formatDateTime(r.create_time) >= (q.create_date_from as string));
  if (typeof q.create_date_to === 'string' && q.create_date_to) rows = rows.filter((r) => formatDateTime(r.create_time) <= (q.create_date_to as string));
  const total = rows.length;
  if (page && size) rows = rows.slice((page - 1) * size, page * size);
  return { total, logs: rows.map(fileLog) };
}

/** `GET /datasets/{id}/ingestions/{log_id}`: one log (RAGFlow's dataset-log fields); unknown → 102 `Log not found`. */
export async function ingestionLog(e: Engine, ctx: Ctx, datasetId: string, logId: string): Promise<P> {
  const kb = await visibleDataset(e, ctx, datasetId);
  if (!kb) dataError('No authorization.');
  const r = await e.store.parse.log(logId);
  if (!r || r.dataset_id !== kb!.id) dataError('Log not found');
  const f = fileLog(r!);
  return Object.fromEntries(['id', 'tenant_id', 'kb_id', 'progress', 'progress_msg', 'process_begin_at', 'process_duration', 'task_type', 'operation_status',
    'avatar', 'status', 'create_time', 'create_date', 'update_time', 'update_date'].map((k) => [k, f[k]]));
}

/**
 * `POST /tasks/{task_id}/cancel` and `PATCH /tasks/{task_id} {action: "stop"}`: a parse's task is
 * its log id; a parse still running stops (its document CANCEL). `data: true` whether or not there
 * was such a task (as RAGFlow), never touching another tenant's.
 */
export async function cancelTask(e: Engine, q: ParseQueue, ctx: Ctx, p: P): Promise<true> {
  if ('action' in p && p.action !== 'stop') {
    throw new ApiError(RetCode.ARGUMENT_ERROR, `Invalid action '${pyStr(p.action)}'. Only 'stop' is supported.`, { data: null });
  }
  const r = await e.store.parse.log(pyStr(p.task_id));
  if (!r || r.operation_status !== RUN.RUNNING) return true;
  const kb = await ownedDataset(e, ctx, r.dataset_id);
  const doc = kb && (await getDocument(e, kb.id, r.document_id));
  if (doc && doc.run === RUN.RUNNING) await cancelParsing(e, q, [doc]);
  return true;
}

/**
 * `POST /agents/rerun {id, dsl, component_id}`: parses again the document of an ingestion log
 * (RAGFlow re-runs its ingestion pipeline from `component_id`; ragloom's parse is one step, so
 * the whole parse runs again). 102 `Document not found.` / `` `name` is processing... ``.
 */
export async function rerunIngestion(e: Engine, q: ParseQueue, ctx: Ctx, p: P): Promise<true> {
  const r = await e.store.parse.log(pyStr(p.id));
  const kb = r && (await ownedDataset(e, ctx, r.dataset_id));
  const doc = kb && (await getDocument(e, kb.id, r!.document_id));
  if (!doc) dataError('Document not found.');
  if (doc!.progress > 0 && doc!.progress < 1) dataError(`\`${doc!.name}\` is processing...`);
  await startParsing(e, q, ctx, kb!.id, { document_ids: [doc!.id] });
  return true;
}
