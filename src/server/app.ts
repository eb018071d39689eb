/**
 * The Fastify app: every row of api/routes.ts `ROUTES` registered in one scope that holds the
 * auth hook; RAGFlow's envelopes, 401 bodies, 404 / 405 answers and catch-all error handler.
 * A thin adapter: it reads params, calls `api.call(op, params, ctx)`, and writes the answer.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { Readable } from 'node:stream';
import { ApiError, RetCode, type Api } from '../api/index.js';
import {
  ROUTES, UNSUPPORTED_ROUTES, API_PREFIX, LEGACY_PREFIX, parseTemplate, coerceQuery, matchRoute, successEnvelope, errorEnvelope, missingArguments, bearerToken, notFoundBody,
  httpExceptionBody, notSupportedError, UNAUTHORIZED_BODY, TOKEN_EMPTY_BODY, TOKEN_FORMAT_BODY, TOKEN_INVALID_BODY, FILE_INFO_KEY, HTTP_STATUS_KEY, FileStream,
  type RouteSpec, type UnsupportedRoute, type AuthKind, type FileInfo,
} from '../api/routes.js';
import { readBody, type UploadLimits } from './body.js';
import { eventsSse, nativeSse, openaiSse, SSE_HEADERS } from './sse.js';
import { pyExceptionRepr, contentDisposition, acceptsOnlyJson, toWireJson } from './http.js';

type Ctx = Parameters<Api['call']>[2] & object;

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request's API key belongs to (set by the auth hook). */
    ctx?: Ctx;
    /** Aborts when the client goes away or the server's shutdown grace period ends. */
    abort?: AbortController;
  }
  interface FastifyContextConfig {
    route?: RouteSpec;
    unsupported?: UnsupportedRoute;
  }
}

export interface AppOptions {
  /** Largest JSON / form body, bytes. */
  bodyLimit: number;
  /** ms to receive a whole request. @default 120000 */
  requestTimeout?: number;
  uploads: UploadLimits;
  logger: boolean;
}

/** Fastify path of a template: a segment that is not exactly `:name` becomes one `:_segN` param, split later. */
function fastifyPath(template: string): { url: string; composite: Array<{ seg: string; re: RegExp }> } {
  const composite: Array<{ seg: string; re: RegExp }> = [];
  const url = template
    .split('/')
    .map((seg, i) => {
      if (!seg.includes(':') || /^:[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) return seg;
      const name = `_seg${i}`;
      const body = parseTemplate(seg).map((t) => ('lit' in t ? t.lit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : `(?<${t.param}>.+?)`)).join('');
      composite.push({ seg: name, re: new RegExp(`^${body}$`) });
      return `:${name}`;
    })
    .join('/');
  return { url, composite };
}

const isAsyncIterable = (v: unknown): v is AsyncIterable<unknown> =>
  !!v && typeof v === 'object' && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';

/** Builds the app (not listening). `inflight` receives each request's AbortController while it runs. */
export async function buildApp(api: Api, opts: AppOptions, inflight: Set<AbortController>, isClosing: () => boolean): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger,
    bodyLimit: opts.bodyLimit,
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: 'idle',
    return503OnClosing: false,
    // A client that stalls while sending its request is cut after this long (responses, such as
    // SSE streams, are not limited by it).
    requestTimeout: opts.requestTimeout ?? 120_000,
    // The router's own errors (a malformed percent-encoding, an over-long path segment) answer in
    // RAGFlow's envelope, as every other bad request does.
    frameworkErrors: (_err, _req, reply) => {
      void (reply as unknown as { code(n: number): { send(b: unknown): unknown } }).code(200).send(httpExceptionBody(400));
    },
  });

  // Bodies are read per route (api/routes.ts BodyKind), so every content type arrives as bytes;
  // multipart is streamed by @fastify/multipart.
  // Objects are written as RAGFlow writes them (whole floats as floats: http.ts toWireJson).
  app.setReplySerializer((payload) => toWireJson(payload));
  app.removeAllContentTypeParsers();
  await app.register(multipart, { limits: { fileSize: opts.uploads.fileSize, files: opts.uploads.files } });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', async (req, reply) => {
    if (isClosing()) {
      reply.code(503).header('connection', 'close').send({ code: RetCode.SERVER_ERROR, message: 'The server is shutting down.', data: null });
      return reply;
    }
    if (mergedSlashes(req, reply)) return reply;
    const abort = new AbortController();
    req.abort = abort;
    inflight.add(abort);
    reply.raw.once('close', () => {
      inflight.delete(abort);
      if (!reply.raw.writableFinished) abort.abort();
    });
  });

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    if (err instanceof ApiError) return sendError(reply, req.routeOptions.config.route, err);
    const status = err.statusCode;
    if (status === 413) return reply.code(413).header('connection', 'close').send(httpExceptionBody(413));
    if (status === 400 || status === 415) return reply.code(200).send(httpExceptionBody(status));
    req.log.error(err);
    return reply.code(200).send({ code: RetCode.EXCEPTION_ERROR, message: pyExceptionRepr(err), data: null });
  });

  app.setNotFoundHandler((req, reply) => {
    const raw = req.url.split('?')[0]!;
    let path = raw;
    try {
      path = decodeURI(raw);
    } catch {
      /* keep it raw */
    }
    if (path.startsWith(`${API_PREFIX}/`)) {
      const m = matchRoute(req.method, path.slice(API_PREFIX.length));
      if (m && !m.route && !m.unsupported) {
        const allow = [...new Set([...m.allowed, ...(m.allowed.includes('GET') ? ['HEAD'] : []), 'OPTIONS'])].join(', ');
        if (req.method === 'OPTIONS') return reply.code(200).header('allow', allow).send('');
        return reply.code(200).header('allow', allow).send(httpExceptionBody(405));
      }
    }
    return reply.code(404).send(notFoundBody(path));
  });

  // Each prefix's rows in their own scope (nearly all are under /api/v1; a few legacy ones under /v1).
  for (const prefix of [API_PREFIX, LEGACY_PREFIX] as const) {
    const mine = <T extends { prefix?: string }>(x: T) => (x.prefix ?? API_PREFIX) === prefix;
    await app.register(
      async (scope) => {
        scope.addHook('onRequest', async (req, reply) => authenticate(api, req, reply));
        for (const spec of ROUTES.filter(mine)) {
          const { url, composite } = fastifyPath(spec.path);
          scope.route({
            method: spec.method,
            url,
            config: { route: spec },
            handler: (req, reply) => handle(api, spec, composite, opts, req, reply),
          });
        }
        // RAGFlow's routes ragloom does not serve: after their authentication, the 501 envelope.
        for (const u of UNSUPPORTED_ROUTES.filter(mine)) {
          scope.route({
            method: u.method,
            url: fastifyPath(u.path).url,
            config: { unsupported: u },
            handler: async (req, reply) => {
              // RAGFlow's required arguments come before the widget key (checked in the handler).
              const body: Record<string, unknown> = u.validates ? await readBody(req, 'json', opts.uploads, true) : {};
              const missing = missingArguments(u, body);
              if (missing) return reply.code(200).send({ ...errorEnvelope(undefined, missing), data: null });
              if (u.auth === 'beta') {
                const who = await betaCaller(api, req.headers.authorization);
                if (who instanceof ApiError) return reply.code(200).send(errorEnvelope(undefined, who));
              }
              // The handler's own empty-value check (Langfuse's 'Missing required fields').
              if (u.emptyMessage && u.validates?.some((k) => !body[k])) return reply.code(200).send(errorEnvelope(undefined, new ApiError(RetCode.DATA_ERROR, u.emptyMessage)));
              return reply.code(200).send(errorEnvelope(undefined, notSupportedError(u)));
            },
          });
        }
      },
      { prefix },
    );
  }
  return app;
}

/**
 * A path with an empty segment (`/datasets//documents`), as Werkzeug routes it for RAGFlow
 * (`merge_slashes`): a route parameter never matches an empty segment, so the path is tried again
 * with the doubled slashes merged — a route of this method there answers HTTP 308 to the merged
 * path (clients follow it), one of another method 405 (code 100), none 404. Returns true when it
 * answered.
 */
function mergedSlashes(req: FastifyRequest, reply: FastifyReply): boolean {
  const [raw, qs] = splitUrl(req.url);
  if (!raw.startsWith(`${API_PREFIX}/`) || !raw.slice(API_PREFIX.length).includes('//')) return false;
  const merged = raw.replace(/\/\//g, '/');
  let decoded = merged;
  try {
    decoded = decodeURI(merged);
  } catch {
    /* keep it raw */
  }
  const m = matchRoute(req.method, decoded.slice(API_PREFIX.length));
  if (m?.route || m?.unsupported) {
    reply.code(308).header('location', merged + (qs === undefined ? '' : `?${qs}`)).send('');
  } else if (m) {
    reply.code(200).header('allow', [...m.allowed, 'OPTIONS'].join(', ')).send(httpExceptionBody(405));
  } else reply.code(404).send(notFoundBody(raw));
  return true;
}

function splitUrl(url: string): [string, string | undefined] {
  const i = url.indexOf('?');
  return i < 0 ? [url, undefined] : [url.slice(0, i), url.slice(i + 1)];
}

/** A failure envelope, sent with HTTP 200 — or with its code as the HTTP status on `errorStatus: 'code'` routes (400 for a code that is no error status). */
function sendError(reply: FastifyReply, spec: RouteSpec | undefined, err: ApiError): FastifyReply {
  if (spec?.errorStatus === 'code') {
    const status = err.code >= 400 && err.code <= 599 ? err.code : 400;
    return reply.code(status).send({ code: err.code, message: err.message });
  }
  return reply.code(200).send(errorEnvelope(spec, err));
}

/**
 * The key of an embedded-widget request (`beta` routes, bot_api.py): exactly two words, the
 * second a key; else RAGFlow's 102 answers (HTTP 200).
 */
async function betaCaller(api: Api, header: string | undefined): Promise<Ctx | ApiError> {
  const words = (header ?? '').split(/\s+/).filter(Boolean);
  if (words.length !== 2) return new ApiError(RetCode.DATA_ERROR, 'Authorization is not valid!');
  return (await verify(api, words[1]!)) ?? new ApiError(RetCode.DATA_ERROR, 'Authentication error: API key is invalid!"');
}

/** RAGFlow's `apikey_required` (Dify's retrieval): `{code: 403, message}` with HTTP 403. */
async function apikeyCaller(api: Api, header: string | undefined): Promise<Ctx | string> {
  if (!header) return 'Authorization header is missing!';
  const words = header.split(/\s+/).filter(Boolean);
  if (words.length < 2) return 'Please check your authorization format.';
  return (await verify(api, words[1]!)) ?? 'API-KEY is invalid!';
}

/** RAGFlow's `login_required` / `token_required` / `apikey_required`: the 401 (403) bodies of §1, else `req.ctx`. */
async function authenticate(api: Api, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const spec: { auth: AuthKind } | undefined = req.routeOptions.config.route ?? req.routeOptions.config.unsupported;
  if (!spec || spec.auth === 'none' || spec.auth === 'beta') return undefined; // `beta`: checked in the handler, as RAGFlow does
  const header = req.headers.authorization;
  if (spec.auth === 'apikey') {
    const who = await apikeyCaller(api, header);
    if (typeof who === 'string') return reply.code(403).send({ code: RetCode.FORBIDDEN, message: who });
    req.ctx = who;
    return undefined;
  }
  if (spec.auth === 'token') {
    if (!header) return reply.code(401).send(TOKEN_EMPTY_BODY);
    const token = bearerToken('token', header);
    if (!token) return reply.code(401).send(TOKEN_FORMAT_BODY);
    const ctx = await verify(api, token);
    if (!ctx) return reply.code(401).send(TOKEN_INVALID_BODY);
    req.ctx = ctx;
    return undefined;
  }
  const token = bearerToken('login', header);
  const ctx = token ? await verify(api, token) : undefined;
  if (!ctx) return reply.code(401).send(UNAUTHORIZED_BODY);
  req.ctx = ctx;
  return undefined;
}

async function verify(api: Api, token: string): Promise<Ctx | undefined> {
  const who = (await api.call('auth.verify', { api_key: token })) as { tenant_id: string; user_id: string } | null;
  return who ? { tenantId: who.tenant_id, userId: who.user_id } : undefined;
}

async function handle(
  api: Api, spec: RouteSpec, composite: Array<{ seg: string; re: RegExp }>, opts: AppOptions, req: FastifyRequest, reply: FastifyReply,
): Promise<unknown> {
  const abort = req.abort ?? new AbortController();
  try {
    // Path params (a composite segment such as `<memory_id>:<message_id>` is split here).
    const path: Record<string, string> = { ...(req.params as Record<string, string>) };
    for (const { seg, re } of composite) {
      const m = re.exec(path[seg] ?? '');
      delete path[seg];
      if (!m) return reply.code(404).send(notFoundBody(decodeURIComponent(req.url.split('?')[0]!)));
      Object.assign(path, m.groups);
    }
    const query = spec.query || spec.queryRest ? coerceQuery(spec, new URLSearchParams(req.url.split('?')[1] ?? '')) : {};
    // An upload's spooled files are removed once the request is answered (or its connection gone).
    const body = await readBody(req, spec.body, opts.uploads, !!spec.validates, (cleanup) => reply.raw.once('close', cleanup));
    const missing = missingArguments(spec, body);
    if (missing) throw missing;
    if (spec.auth === 'beta') {
      const who = await betaCaller(api, req.headers.authorization);
      if (who instanceof ApiError) throw who;
      req.ctx = who;
    }
    const params: Record<string, unknown> = { ...query, ...body };
    for (const [k, v] of Object.entries(path)) {
      if ((spec.bodyWins ?? []).includes(k) && body[k]) continue;
      params[k] = v;
    }
    Object.assign(params, spec.fixed);
    if (spec.stream) params.signal = abort.signal;
    // A file is sent as it is read from the store (ops that can stream it do).
    if (spec.envelope === 'bytes') params.stream = true;
    // OpenAI's clients leave `stream` out of a plain call and ask for JSON: they get JSON (RAGFlow
    // would stream, which they cannot read). Without such an Accept, a missing `stream` streams.
    if (spec.stream === 'openai' && body.stream === undefined && acceptsOnlyJson(req.headers.accept)) params.stream = false;

    const result = await api.call(spec.op, params, req.ctx);

    if (isAsyncIterable(result)) {
      reply.headers(SSE_HEADERS);
      const stream = spec.stream === 'openai'
        ? openaiSse(result, abort.signal, { id: `chatcmpl-${String(params.chat_id ?? '')}`, model: String(params.model ?? '') })
        : spec.stream === 'events' ? eventsSse(result, abort.signal) : nativeSse(result, abort.signal);
      return reply.code(200).send(stream);
    }
    switch (spec.envelope) {
      case 'openai':
        return reply.code(spec.status).send(result);
      case 'raw': {
        const status = (result as { [HTTP_STATUS_KEY]?: number } | null)?.[HTTP_STATUS_KEY] ?? spec.status;
        if (typeof result === 'string') return reply.code(status).header('content-type', 'text/html; charset=utf-8').send(result);
        return reply.code(status).send(result);
      }
      case 'bytes': {
        const bytes = result as Uint8Array & { [FILE_INFO_KEY]?: FileInfo };
        const info = result instanceof FileStream ? result.info : bytes[FILE_INFO_KEY] ?? {};
        reply.code(spec.status).header('content-type', info.contentType ?? 'application/octet-stream');
        if (info.disposition !== 'none') {
          reply.header('content-disposition', info.disposition === 'inline' || !info.name ? info.disposition ?? 'attachment' : contentDisposition(info.name));
        }
        if (info.disposition === 'attachment' && !info.name) reply.header('x-content-type-options', 'nosniff');
        if (result instanceof FileStream) return reply.header('content-length', result.size).send(Readable.from(result.parts, { objectMode: false }));
        return reply.send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      }
      default:
        return reply.code(spec.status).send(successEnvelope(spec, result));
    }
  } catch (e) {
    if (e instanceof ApiError) return sendError(reply, spec, e);
    throw e;
  }
}
