/**
 * A dataset's tags: the `tag_kwd` of its chunks (a chunk's tags are given when it is added or
 * updated, or by the `tag` chunk method), as RAGFlow's dataset_api tag routes list, count,
 * remove and rename them.
 */
import type { Engine, Ctx } from '../core/index.js';
import { visibleDataset } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { datasetIdsArg } from './metadata.js';

type P = Record<string, unknown>;
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};
const argError = (message: string): never => {
  throw new ApiError(RetCode.ARGUMENT_ERROR, message);
};

/** `[tag, count]` over the chunks of the datasets, most used first (RAGFlow's terms aggregation). */
function tagCounts(e: Engine, datasetIds: string[]): Array<[string, number]> {
  const rows = e.db.prepare(`SELECT j.value AS tag, COUNT(*) AS n FROM chunk c, json_each(c.tag_kwd) j
    WHERE c.dataset_id IN (SELECT value FROM json_each(?)) AND c.tag_kwd != '[]' AND j.type = 'text' GROUP BY j.value ORDER BY n DESC, tag`)
    .all(JSON.stringify(datasetIds)) as Array<{ tag: string; n: number }>;
  return rows.map((r) => [r.tag, r.n]);
}

function dataset(e: Engine, ctx: Ctx, datasetId: string) {
  if (!datasetId) dataError('Lack of "Dataset ID"');
  const kb = visibleDataset(e, ctx, datasetId);
  if (!kb) dataError('No authorization.');
  return kb!;
}

/** `GET /datasets/{id}/tags`: `[[tag, count], …]`. */
export function listTags(e: Engine, ctx: Ctx, datasetId: string): Array<[string, number]> {
  return tagCounts(e, [dataset(e, ctx, datasetId).id]);
}

/** `GET /datasets/tags/aggregation?dataset_ids=a,b`: `[{value, count}, …]` over the datasets. */
export function aggregateTags(e: Engine, ctx: Ctx, q: P): Array<{ value: string; count: number }> {
  const ids = datasetIdsArg(q);
  for (const id of ids) if (!visibleDataset(e, ctx, id)) dataError(`No authorization for dataset '${id}'`);
  return tagCounts(e, ids).map(([value, count]) => ({ value, count }));
}

/** Rewrites the tag lists of the dataset's chunks that hold `tag` (one transaction). */
function rewriteTags(e: Engine, datasetId: string, tag: string, change: (tags: unknown[]) => unknown[]): void {
  const rows = e.db.prepare(`SELECT rowid, tag_kwd FROM chunk WHERE dataset_id = ? AND EXISTS (SELECT 1 FROM json_each(chunk.tag_kwd) j WHERE j.value = ?)`)
    .all(datasetId, tag) as Array<{ rowid: number; tag_kwd: string }>;
  const upd = e.db.prepare('UPDATE chunk SET tag_kwd = ? WHERE rowid = ?');
  for (const r of rows) upd.run(JSON.stringify(change(JSON.parse(r.tag_kwd) as unknown[])), r.rowid);
}

/** `DELETE /datasets/{id}/tags {tags: [..]}`: the tags leave every chunk; `{}`. */
export function deleteTags(e: Engine, ctx: Ctx, datasetId: string, req: P): Record<string, never> {
  if (!('tags' in req)) dataError('Lack of tags in request body');
  if (!Array.isArray(req.tags) || !req.tags.every((t) => typeof t === 'string')) argError('tags must be a list of strings');
  const kb = dataset(e, ctx, datasetId);
  e.tx(() => {
    for (const t of req.tags as string[]) rewriteTags(e, kb.id, t, (tags) => tags.filter((x) => x !== t));
  });
  return {};
}

/** `PUT /datasets/{id}/tags {from_tag, to_tag}`: renames a tag on every chunk; `{from, to}`. */
export function renameTag(e: Engine, ctx: Ctx, datasetId: string, req: P): { from: string; to: string } {
  if (!('from_tag' in req) || !('to_tag' in req)) dataError('Lack of from_tag or to_tag in request body');
  if (typeof req.from_tag !== 'string' || typeof req.to_tag !== 'string') argError('from_tag and to_tag must be strings');
  const from = req.from_tag as string;
  const to = req.to_tag as string;
  if (!from.trim() || !to.trim()) argError('from_tag and to_tag must not be empty');
  const kb = dataset(e, ctx, datasetId);
  e.tx(() => rewriteTags(e, kb.id, from, (tags) => [...new Set([...tags.filter((x) => x !== from.trim()), to])]));
  return { from, to };
}
