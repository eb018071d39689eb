/**
 * Reading a request's body the way RAGFlow's handlers do (see `BodyKind` in api/routes.ts): the
 * lenient `get_request_json`, the strict Pydantic path, and multipart uploads.
 */
import type { FastifyRequest } from 'fastify';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, RetCode } from '../api/index.js';
import type { BodyKind, UploadPart } from '../api/routes.js';

type Dict = Record<string, unknown>;

const exception = (repr: string) => new ApiError(RetCode.EXCEPTION_ERROR, repr);
const argument = (msg: string) => new ApiError(RetCode.ARGUMENT_ERROR, msg);

/** Python's type name of a parsed JSON value. */
function pyTypeName(v: unknown, raw: string): string {
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) && !/[.eE]/.test(raw) ? 'int' : 'float';
  return 'dict';
}

function mimeType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

function bufferOf(req: FastifyRequest): Buffer | undefined {
  return Buffer.isBuffer(req.body) ? req.body : undefined;
}

/** Fields of a multipart body (files are read and dropped), for JSON routes sent a form. */
async function multipartFields(req: FastifyRequest): Promise<Dict> {
  const out: Dict = {};
  for await (const part of req.parts()) {
    if (part.type === 'file') await part.toBuffer();
    else if (!(part.fieldname in out)) out[part.fieldname] = part.value;
  }
  return out;
}

/** RAGFlow `get_request_json`. */
async function lenientJson(req: FastifyRequest): Promise<Dict> {
  if (req.isMultipart()) {
    const fields = await multipartFields(req);
    if (!Object.keys(fields).length) throw exception("TypeError('Request body is not a valid form payload.')");
    return fields;
  }
  const buf = bufferOf(req);
  if (!buf || buf.length === 0) return {};
  const ct = (req.headers['content-type'] ?? '').toLowerCase();
  if (ct.startsWith('application/json')) {
    let v: unknown;
    try {
      v = JSON.parse(buf.toString('utf8'));
    } catch {
      throw exception("<BadRequest '400: Bad Request'>");
    }
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Dict;
    if (typeof v === 'string') throw exception('AttributeError("\'str\' object has no attribute \'get\'")');
    throw exception("TypeError('JSON payload must be an object.')");
  }
  if (mimeType(ct) === 'application/x-www-form-urlencoded') {
    const out: Dict = {};
    for (const [k, v] of new URLSearchParams(buf.toString('utf8'))) if (!(k in out)) out[k] = v;
    if (Object.keys(out).length) return out;
  }
  throw exception("TypeError('Request body is not a valid form payload.')");
}

/** RAGFlow `validate_and_parse_json_request`. */
async function strictJson(req: FastifyRequest): Promise<Dict> {
  const header = req.headers['content-type'];
  if (mimeType(header) !== 'application/json') {
    if (req.isMultipart()) await multipartFields(req).catch(() => undefined); // drain it
    throw argument(`Unsupported content type: Expected application/json, got ${header ?? 'None'}`);
  }
  const raw = bufferOf(req)?.toString('utf8') ?? '';
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw argument('Malformed JSON syntax: Missing commas/brackets or invalid encoding');
  }
  if (!v || (Array.isArray(v) && v.length === 0)) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw argument(`Invalid request payload: expected object, got ${pyTypeName(v, raw)}`);
  return v as Dict;
}

export interface UploadLimits {
  /** Largest file, bytes. */
  fileSize: number;
  /** Most files in one request. */
  files: number;
  /** Most bytes of files in one request (RAGFlow's MAX_CONTENT_LENGTH). */
  total?: number;
}

/**
 * Every part named `file` of a multipart body; other parts are read and dropped. Each file is
 * spooled to a temporary file as it arrives and handed to the op as a stream of it: no file, nor
 * the request, is held in memory (the store writes it part by part). `done` is told how to
 * remove the spool once the request has been answered.
 */
async function uploads(req: FastifyRequest, limits: UploadLimits, done: (cleanup: () => void) => void): Promise<UploadPart[]> {
  if (!req.isMultipart()) return [];
  const files: UploadPart[] = [];
  let total = 0;
  let dir: string | undefined;
  try {
    for await (const part of req.parts({ limits: { fileSize: limits.fileSize, files: limits.files } })) {
      if (part.type !== 'file') continue;
      if (part.fieldname !== 'file') {
        part.file.resume();
        continue;
      }
      if (!dir) {
        dir = await mkdtemp(join(tmpdir(), 'ragloom-upload-'));
        const d = dir;
        done(() => void rm(d, { recursive: true, force: true }));
      }
      const path = join(dir, String(files.length));
      // The whole request is capped as well as each file.
      const count = new Transform({
        transform(piece: Buffer, _enc, next) {
          total += piece.length;
          if (limits.total !== undefined && total > limits.total) next(Object.assign(new Error('upload too large'), { statusCode: 413 }));
          else next(null, piece);
        },
      });
      await pipeline(part.file, count, createWriteStream(path));
      // @fastify/multipart stops a file at fileSize without failing the stream: refuse it as toBuffer did.
      if (part.file.truncated) throw Object.assign(new Error('request file too large'), { statusCode: 413 });
      files.push({ display_name: part.filename ?? '', blob: createReadStream(path) });
    }
  } catch (e) {
    if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    throw e;
  }
  return files;
}

/**
 * The body of a request per its route's `BodyKind`: a dict for JSON routes, `{files}` for
 * multipart ones, `{}` for `none`. With `lenient`, an unreadable JSON body is `{}` (RAGFlow's
 * `@validate_request` swallows the parse error and reports the missing arguments instead).
 */
export async function readBody(req: FastifyRequest, kind: BodyKind, limits: UploadLimits, lenient = false,
  done: (cleanup: () => void) => void = () => undefined): Promise<Dict> {
  switch (kind) {
    case 'none':
      if (req.isMultipart()) await multipartFields(req).catch(() => undefined);
      return {};
    case 'multipart':
      return { files: await uploads(req, limits, done) };
    case 'json-strict':
      return strictJson(req);
    case 'json':
      try {
        return await lenientJson(req);
      } catch (e) {
        if (lenient && e instanceof ApiError) return {};
        throw e;
      }
    case 'json-args':
      try {
        return await lenientJson(req);
      } catch (e) {
        if (e instanceof ApiError) throw argument(`invalid or malformed arguments: ${pyStrOf(e.message)}; `);
        throw e;
      }
  }
}

/** `str(e)` of the exception whose repr a lenient read reports (Werkzeug's BadRequest, a TypeError, …). */
function pyStrOf(repr: string): string {
  if (repr === "<BadRequest '400: Bad Request'>") return '400 Bad Request: The browser (or proxy) sent a request that this server could not understand.';
  return /^\w+\((['"])(.*)\1\)$/s.exec(repr)?.[2] ?? repr;
}
