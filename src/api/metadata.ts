/**
 * Documents' metadata (`meta_fields`), as RAGFlow 0.25.6 reads and writes it
 * (doc_metadata_service.py, common/metadata_utils.py): the `metadata_condition` filter wherever a
 * route takes one, the batch update (`PATCH /datasets/{id}/documents/metadatas`, `POST
 * /datasets/{id}/metadata/update`), the summary and the flattened view, and the auto-metadata
 * configuration of a dataset and of a document (kept, and shown; ragloom extracts no metadata
 * with a model).
 */
import type { Engine, Ctx } from '../core/index.js';
import { visibleDataset, ownedDataset, getDocument, documentRaw, type DocumentRow } from '../core/index.js';
import type { MetadataFilter } from '../search/index.js';
import { operatorOf, filterDocuments } from '../search/index.js';
import { ApiError, RetCode, fail } from './errors.js';
import { Issues, checkExtra, checkStr } from './validate.js';
import { pyStr, pyRepr } from './pyfmt.js';
import { isPlainObject } from '../util/index.js';

type P = Record<string, unknown>;
const dataError = (message: string): never => {
  throw new ApiError(RetCode.DATA_ERROR, message);
};
/** An unguarded Python exception reaching RAGFlow's handler: code 100 and its repr. */
const pyError = (repr: string): never => {
  throw new ApiError(RetCode.EXCEPTION_ERROR, repr);
};

/** Python's type name of a JSON value. */
export function pyType(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return 'dict';
}

/** Python truthiness of a JSON value. */
export const truthy = (v: unknown): boolean =>
  !(v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0));

// ---------------------------------------------------------------- metadata_condition

/**
 * A `metadata_condition` as RAGFlow's handlers read it (`convert_conditions`, then `meta_filter`):
 * a falsy value is no filter (null); anything else must be a dict whose `conditions` are dicts
 * with `comparison_operator`, `name` and `value` — otherwise the Python error RAGFlow raises, code
 * 100 (`AttributeError("'list' object has no attribute 'get'")`, `KeyError('name')`, …). `logic`
 * other than "and" is "or". A filter without conditions matches no document, and so does a
 * condition whose operator RAGFlow does not know (aliases `is`, `not is`, `!=`, `>=`, `<=`).
 */
export function readMetadataCondition(v: unknown): MetadataFilter | null {
  if (!truthy(v)) return null;
  if (!isPlainObject(v)) return pyError(`AttributeError("'${pyType(v)}' object has no attribute 'get'")`);
  const raw = 'conditions' in v ? v.conditions : [];
  let items: unknown[];
  if (Array.isArray(raw)) items = raw;
  else if (typeof raw === 'string') items = [...raw];
  else if (isPlainObject(raw)) items = Object.keys(raw);
  else return pyError(`TypeError("'${pyType(raw)}' object is not iterable")`);
  const conditions = items.map((c) => {
    if (!isPlainObject(c)) {
      if (typeof c === 'string') return pyError(`TypeError("string indices must be integers, not 'str'")`);
      if (Array.isArray(c)) return pyError('TypeError(\'list indices must be integers or slices, not str\')');
      return pyError(`TypeError("'${pyType(c)}' object is not subscriptable")`);
    }
    for (const k of ['comparison_operator', 'name', 'value']) if (!(k in c)) pyError(`KeyError('${k}')`);
    return { name: pyStr(c.name), op: operatorOf(c.comparison_operator), value: c.value };
  });
  const logic = 'logic' in v ? v.logic : 'and';
  return { logic: logic === 'and' ? 'and' : 'or', conditions };
}

// ---------------------------------------------------------------- meta_fields of one document

/**
 * `UpdateDocumentReq.meta_fields` (strict): a dict (or None) whose values are str, int or float
 * (a bool is an int in Python) or lists of them; an error is reported at the field, with the
 * offending value in the message, code 102.
 */
export function checkMetaFields(is: Issues, v: unknown): void {
  if (v === null) return;
  if (!isPlainObject(v)) return is.add('meta_fields', 'Input should be a valid dictionary', v);
  const scalar = (x: unknown) => typeof x === 'string' || typeof x === 'boolean' || (typeof x === 'number' && Number.isFinite(x));
  for (const x of Object.values(v)) {
    if (Array.isArray(x)) {
      if (!x.every(scalar)) return is.add('meta_fields', `The type is not supported in list: ${pyRepr(x)}`, v);
    } else if (!scalar(x)) return is.add('meta_fields', `The type is not supported: ${pyStr(x)}`, v);
  }
}

/** `dedupe_list`: the first of each value by its `str()`, in order. */
function dedupe(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((x) => {
    const k = pyStr(x);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * What RAGFlow stores for a document's metadata (`_split_combined_values`): a list's strings split
 * on `、 , ， ; ； |`, trimmed, de-duplicated; other values as given.
 */
export function splitCombinedValues(meta: P): P {
  const out: P = {};
  for (const [k, v] of Object.entries(meta)) {
    if (!Array.isArray(v)) {
      out[k] = v;
      continue;
    }
    const items: unknown[] = [];
    for (const item of v) {
      if (typeof item !== 'string') {
        items.push(item);
        continue;
      }
      const parts = item.trim().split(/[、,，;；|]+/).map((s) => s.trim()).filter(Boolean);
      items.push(...(parts.length ? parts : [item]));
    }
    out[k] = dedupe(items);
  }
  return out;
}

const metaOf = (r: { meta_fields: string }): P => {
  try {
    const v = JSON.parse(r.meta_fields) as unknown;
    return isPlainObject(v) ? v : {};
  } catch {
    return {};
  }
};

/** `{key: {value: [document ids]}}` over the datasets' documents (`get_flatted_meta_by_kbs`): list values flattened, values as `str()`. */
async function flattened(e: Engine, datasetIds: string[]): Promise<Record<string, Record<string, string[]>>> {
  const out: Record<string, Record<string, string[]>> = {};
  for (const ds of datasetIds) {
    for (const r of await e.store.documents.metaFieldsOf(ds, true)) {
      for (const [k, v] of Object.entries(metaOf(r))) {
        const byValue = (out[k] ??= {});
        for (const x of Array.isArray(v) ? v : [v]) {
          if (x === null || x === undefined) continue;
          (byValue[pyStr(x)] ??= []).push(r.id);
        }
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- batch update

/** Python `==` of JSON values (dict key order aside). */
function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && same(a[k], b[k]));
  }
  return a === b;
}

const strEqual = (a: unknown, b: unknown) => pyStr(a) === pyStr(b);

/** `_apply_updates` and `_apply_deletes` of `batch_update_metadata`; whether the metadata changed. */
function applyChanges(meta: P, updates: P[], deletes: P[]): boolean {
  const before = structuredClone(meta);
  for (const u of updates) {
    const key = pyStr(u.key);
    const value = u.value;
    const match = u.match;
    const matchGiven = match !== undefined && match !== null && match !== '';
    if (!(key in meta)) {
      if (!matchGiven) meta[key] = Array.isArray(value) ? dedupe(value) : value;
      continue;
    }
    const cur = meta[key];
    if (Array.isArray(cur)) {
      if (!matchGiven) meta[key] = dedupe([...cur, ...(Array.isArray(value) ? value : [value])]);
      else if (cur.some((x) => strEqual(x, match))) meta[key] = dedupe(cur.map((x) => (strEqual(x, match) ? value : x)));
    } else if (!matchGiven || strEqual(cur, match)) meta[key] = value;
  }
  for (const d of deletes) {
    const key = pyStr(d.key);
    if (!(key in meta)) continue;
    const value = d.value;
    const cur = meta[key];
    if (value === undefined || value === null) delete meta[key];
    else if (Array.isArray(cur)) {
      const kept = cur.filter((x) => !strEqual(x, value));
      if (kept.length !== cur.length) {
        if (kept.length) meta[key] = kept;
        else delete meta[key];
      }
    } else if (strEqual(cur, value)) delete meta[key];
  }
  return !same(before, meta);
}

/**
 * The batch update: `{selector: {document_ids?, metadata_condition?}, updates: [{key, value,
 * match?}], deletes: [{key, value?}]}`, checked in RAGFlow's order (code 102 each). The targets
 * are the listed documents, narrowed by the condition (RAGFlow intersects the two, so a condition
 * alone selects nothing). `{updated, matched_docs}`.
 */
export async function updateMetadata(e: Engine, ctx: Ctx, datasetId: string, req: P): Promise<{ updated: number; matched_docs: number }> {
  const kb = await visibleDataset(e, ctx, datasetId);
  if (!kb) dataError(`You don't own the dataset ${datasetId}.${req._route === 'metadata/update' ? ' ' : ''}`);
  const selector = truthy(req.selector) ? req.selector : {};
  const updates = truthy(req.updates) ? req.updates : [];
  const deletes = truthy(req.deletes) ? req.deletes : [];
  if (!isPlainObject(selector)) dataError('selector must be an object.');
  if (!Array.isArray(updates) || !Array.isArray(deletes)) dataError('updates and deletes must be lists.');
  const sel = selector as P;
  const condition = truthy(sel.metadata_condition) ? sel.metadata_condition : {};
  if (truthy(condition) && !isPlainObject(condition)) dataError('metadata_condition must be an object.');
  const documentIds = truthy(sel.document_ids) ? sel.document_ids : [];
  if (truthy(documentIds) && !Array.isArray(documentIds)) dataError('document_ids must be a list.');
  for (const u of updates as unknown[]) if (!isPlainObject(u) || !truthy(u.key) || !('value' in u)) dataError('Each update requires key and value.');
  for (const d of deletes as unknown[]) if (!isPlainObject(d) || !truthy(d.key)) dataError('Each delete requires key.');

  let targets = new Set<string>();
  const ids = [...new Set((documentIds as unknown[]).map((x) => pyStr(x)))];
  if (ids.length) {
    const found = await e.store.documents.getMany(kb!.id, ids);
    const invalid = ids.filter((id) => !found.has(id));
    if (invalid.length) dataError(`These documents do not belong to dataset ${kb!.id}: ${invalid.join(', ')}`);
    targets = new Set(ids);
  }
  const filter = readMetadataCondition(condition);
  if (filter) {
    const docs = await e.store.documents.metaFieldsOf(kb!.id);
    const hit = filterDocuments(docs, filter);
    targets = new Set([...targets].filter((id) => hit.has(id)));
    if (filter.conditions.length && !targets.size) return { updated: 0, matched_docs: 0 };
  }
  // Each target read and written in one transaction (one deleted meanwhile is skipped).
  const updated = await e.store.documents.editMetaFields(kb!.id, [...targets], (doc) => {
    const meta = metaOf(doc);
    return applyChanges(meta, updates as P[], deletes as P[]) ? JSON.stringify(splitCombinedValues(meta)) : null;
  }, Date.now());
  return { updated, matched_docs: targets.size };
}

// ---------------------------------------------------------------- summary, flattened view

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
function valueType(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string' && TIME.test(v)) return 'time';
  return 'string';
}

/**
 * `GET /datasets/{id}/metadata/summary?doc_ids=a,b`: `{summary: {key: {type, values: [[value,
 * count], …]}}}`, values by count (most first), the type most of the key's values have.
 */
export async function metadataSummary(e: Engine, ctx: Ctx, datasetId: string, q: P): Promise<{ summary: Record<string, { type: string; values: Array<[string, number]> }> }> {
  const kb = await visibleDataset(e, ctx, datasetId);
  if (!kb) dataError(`You don't own the dataset ${datasetId}. `);
  const only = typeof q.doc_ids === 'string' && q.doc_ids ? new Set(q.doc_ids.split(',')) : undefined;
  const counts = new Map<string, Map<string, number>>();
  const types = new Map<string, Map<string, number>>();
  const rows = await e.store.documents.metaFieldsOf(kb!.id, true);
  for (const r of rows) {
    if (only && !only.has(r.id)) continue;
    for (const [k, v] of Object.entries(metaOf(r))) {
      const t = valueType(v);
      if (t) {
        const byType = types.get(k) ?? new Map<string, number>();
        types.set(k, byType.set(t, (byType.get(t) ?? 0) + 1));
      }
      for (const x of Array.isArray(v) ? v : [v]) {
        if (x === null || x === undefined) continue;
        const byValue = counts.get(k) ?? new Map<string, number>();
        counts.set(k, byValue.set(pyStr(x), (byValue.get(pyStr(x)) ?? 0) + 1));
      }
    }
  }
  const summary: Record<string, { type: string; values: Array<[string, number]> }> = {};
  for (const [k, byValue] of counts) {
    let type = 'string';
    let most = -1;
    for (const [t, n] of types.get(k) ?? []) if (n > most) [type, most] = [t, n];
    summary[k] = { type, values: [...byValue].sort((a, b) => b[1] - a[1]) };
  }
  return { summary };
}

/**
 * `dataset_ids` of a query string, comma-separated, each visible to `ctx`; none → 102 `Lack of
 * dataset_ids in query parameters`, one not visible → 102 `No authorization for dataset '…'`.
 */
export async function visibleDatasetIdsArg(e: Engine, ctx: Ctx, q: P): Promise<string[]> {
  const ids = (typeof q.dataset_ids === 'string' ? q.dataset_ids : '').split(',').filter(Boolean);
  if (!ids.length) dataError('Lack of dataset_ids in query parameters');
  const visible = await e.store.datasets.getVisibleMany(ids, ctx);
  for (const id of ids) if (!visible.has(id)) dataError(`No authorization for dataset '${id}'`);
  return ids;
}

/** `GET /datasets/metadata/flattened?dataset_ids=a,b`. */
export async function flattenedMetadata(e: Engine, ctx: Ctx, q: P): Promise<Record<string, Record<string, string[]>>> {
  return flattened(e, await visibleDatasetIdsArg(e, ctx, q));
}

// ---------------------------------------------------------------- auto-metadata configuration

const FIELD_TYPES = ['string', 'list', 'time', 'number'];

/** `AutoMetadataConfig` (strict, extra forbidden) as `validate_and_parse_json_request` dumps it. */
export function checkAutoMetadata(is: Issues, req: P): P {
  checkExtra(is, req, ['metadata', 'built_in_metadata']);
  const out: P = {};
  for (const key of ['metadata', 'built_in_metadata']) {
    const list = req[key] ?? [];
    if (!Array.isArray(list)) {
      is.add(key, 'Input should be a valid list', list);
      continue;
    }
    out[key] = list.map((f, i) => {
      const loc = `${key}.${i}`;
      if (!isPlainObject(f)) {
        is.add(loc, 'Input should be a valid dictionary or instance of AutoMetadataField', f);
        return f;
      }
      checkExtra(is, f, ['key', 'type', 'description', 'enum'], `${loc}.`);
      if (!('key' in f)) is.add(`${loc}.key`, 'Field required', f);
      else if (checkStr(is, `${loc}.key`, f.key)) checkStr(is, `${loc}.key`, f.key.trim(), { min: 1, max: 255 });
      if (!('type' in f)) is.add(`${loc}.type`, 'Field required', f);
      else if (!FIELD_TYPES.includes(f.type as string)) is.add(`${loc}.type`, "Input should be 'string', 'list', 'time' or 'number'", f.type);
      if (f.description !== undefined && f.description !== null) checkStr(is, `${loc}.description`, f.description, { max: 65535 });
      if (f.enum !== undefined && f.enum !== null) {
        if (!Array.isArray(f.enum)) is.add(`${loc}.enum`, 'Input should be a valid list', f.enum);
        else f.enum.forEach((x, j) => checkStr(is, `${loc}.enum.${j}`, x));
      }
      return { key: typeof f.key === 'string' ? f.key.trim() : f.key, type: f.type, description: f.description ?? null, enum: f.enum ?? null };
    });
  }
  return out;
}

async function ownedOrLacks(e: Engine, ctx: Ctx, datasetId: string) {
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_LACKS_PERMISSION', ctx.tenantId, datasetId);
  return kb;
}

/** `GET /datasets/{id}/metadata/config`: `{metadata, built_in_metadata}` (the owner only). */
export async function getAutoMetadata(e: Engine, ctx: Ctx, datasetId: string): Promise<P> {
  const kb = await ownedOrLacks(e, ctx, datasetId);
  const cfg = JSON.parse(kb.parser_config) as P;
  return { metadata: cfg.metadata || [], built_in_metadata: cfg.built_in_metadata || [] };
}

/** `PUT /datasets/{id}/metadata/config`: stored in the dataset's parser_config, answered as validated. */
export async function updateAutoMetadata(e: Engine, ctx: Ctx, datasetId: string, req: P): Promise<P> {
  const is = new Issues();
  const cfg = checkAutoMetadata(is, req);
  is.throwIfAny();
  const kb = await ownedOrLacks(e, ctx, datasetId);
  const parserConfig = { ...(JSON.parse(kb.parser_config) as P), metadata: cfg.metadata ?? [], built_in_metadata: cfg.built_in_metadata ?? [] };
  await e.store.datasets.update(kb.id, { parser_config: JSON.stringify(parserConfig), update_time: Date.now() });
  return { metadata: cfg.metadata ?? [], built_in_metadata: cfg.built_in_metadata ?? [] };
}

/** DocumentService.update_parser_config: `config` merged in depth; a config without `raptor` drops the document's. */
function mergeParserConfig(old: P, config: P): P {
  const merge = (a: P, b: P) => {
    for (const [k, v] of Object.entries(b)) {
      if (isPlainObject(v) && isPlainObject(a[k])) merge(a[k] as P, v);
      else a[k] = v;
    }
  };
  const out = structuredClone(old);
  merge(out, config);
  if (!truthy(config.raptor) && truthy(out.raptor)) delete out.raptor;
  return out;
}

/**
 * `PUT /datasets/{id}/documents/{doc}/metadata/config` `{metadata}`: merged into the document's
 * parser_config; answers the document as RAGFlow's model dict (kb_id, parser_id, …).
 */
export async function updateDocumentMetadataConfig(e: Engine, ctx: Ctx, datasetId: string, documentId: string, req: P): Promise<P> {
  const kb = await ownedDataset(e, ctx, datasetId);
  if (!kb) fail('DATASET_NOT_OWNED_NO_ID');
  const doc = await getDocument(e, kb.id, documentId);
  if (!doc) dataError(`Document ${documentId} not found in dataset ${datasetId}`);
  if (!('metadata' in req)) throw new ApiError(RetCode.ARGUMENT_ERROR, 'metadata is required');
  const cfg = mergeParserConfig(JSON.parse(doc!.parser_config) as P, { metadata: req.metadata });
  await e.store.documents.update(doc!, { changes: { parser_config: JSON.stringify(cfg), update_time: Date.now() }, resetChunks: false });
  return documentRaw((await getDocument(e, kb.id, doc!.id)) as DocumentRow);
}
