/**
 * A dataset's tags: the `tag_kwd` of its chunks (a chunk's tags are given when it is added or
 * updated, or by the `tag` chunk method), as RAGFlow's dataset_api tag routes list, count,
 * remove and rename them.
 */
import type { Engine, Ctx } from '../core/index.js';
import { visibleDataset } from '../core/index.js';
import { ApiError, RetCode } from './errors.js';
import { visibleDatasetIdsArg } from './metadata.js';

type P = Record<string, unknown>;
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};
const argError = (message: string): never => {
  throw new ApiError(RetCode.ARGUMENT_ERROR, message);
};

async function dataset(e: Engine, ctx: Ctx, datasetId: string) {
  if (!datasetId) dataError('Lack of "Dataset ID"');
  const kb = await visibleDataset(e, ctx, datasetId);
  if (!kb) dataError('No authorization.');
  return kb!;
}

/** `GET /datasets/{id}/tags`: `[[tag, count], …]`. */
export async function listTags(e: Engine, ctx: Ctx, datasetId: string): Promise<Array<[string, number]>> {
  // `[tag, count]` over the dataset's chunks, most used first (RAGFlow's terms aggregation).
  return e.store.chunks.tagCounts([(await dataset(e, ctx, datasetId)).id]);
}

/** `GET /datasets/tags/aggregation?dataset_ids=a,b`: `[{value, count}, …]` over the datasets. */
export async function aggregateTags(e: Engine, ctx: Ctx, q: P): Promise<Array<{ value: string; count: number }>> {
  const ids = await visibleDatasetIdsArg(e, ctx, q);
  return (await e.store.chunks.tagCounts(ids)).map(([value, count]) => ({ value, count }));
}

/** `DELETE /datasets/{id}/tags {tags: [..]}`: the tags leave every chunk; `{}`. */
export async function deleteTags(e: Engine, ctx: Ctx, datasetId: string, req: P): Promise<Record<string, never>> {
  if (!('tags' in req)) dataError('Lack of tags in request body');
  if (!Array.isArray(req.tags) || !req.tags.every((t) => typeof t === 'string')) argError('tags must be a list of strings');
  const kb = await dataset(e, ctx, datasetId);
  await e.store.chunks.editTags(kb.id, (req.tags as string[]).map((t) => ({ tag: t, change: (tags) => tags.filter((x) => x !== t) })));
  return {};
}

/** `PUT /datasets/{id}/tags {from_tag, to_tag}`: renames a tag on every chunk; `{from, to}`. */
export async function renameTag(e: Engine, ctx: Ctx, datasetId: string, req: P): Promise<{ from: string; to: string }> {
  if (!('from_tag' in req) || !('to_tag' in req)) dataError('Lack of from_tag or to_tag in request body');
  if (typeof req.from_tag !== 'string' || typeof req.to_tag !== 'string') argError('from_tag and to_tag must be strings');
  const from = req.from_tag as string;
  const to = req.to_tag as string;
  if (!from.trim() || !to.trim()) argError('from_tag and to_tag must not be empty');
  const kb = await dataset(e, ctx, datasetId);
  await e.store.chunks.editTags(kb.id, [{ tag: from, change: (tags) => [...new Set([...tags.filter((x) => x !== from.trim()), to])] }]);
  return { from, to };
}
