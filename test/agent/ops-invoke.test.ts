import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkInvokeParams, htmlToText, invokeHttp, invokeRefusal, type Resolve } from '../../src/agent/ops/index.js';

let server: http.Server;
let base: string;
let port: number;
let flakyHits = 0;

const PAGE = `<!doctype html><html><head><title>T</title><style>p{color:red}</style><script>var x = 1;</script></head>
<body><h1>Title  here</h1><p>First   para<br>second line</p><div>Block <b>bold</b> text</div>
<ul><li>one</li><li>two</li></ul><table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table><noscript>no</noscript></body></html>`;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const echo = (): void => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ method: req.method, path: url.pathname, query: url.search, headers: req.headers, body: Buffer.concat(chunks).toString() }));
      };
      switch (url.pathname) {
        case '/html':
          res.setHeader('Content-Type', 'text/html; charset=utf-8');
          res.end(PAGE);
          return;
        case '/latin1':
          res.setHeader('Content-Type', 'text/plain; charset=iso-8859-1');
          res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1
          return;
        case '/slow':
          setTimeout(echo, 3000);
          return;
        case '/fail':
          res.statusCode = 500;
          res.end('boom');
          return;
        case '/redirect':
          res.statusCode = 302;
          res.setHeader('Location', '/echo?from=redirect');
          res.end();
          return;
        case '/redirect-out':
          res.statusCode = 307;
          res.setHeader('Location', `http://localhost:${port}/echo`);
          res.end();
          return;
        case '/flaky':
          if (flakyHits++ < 1) {
            req.socket.destroy();
            return;
          }
          echo();
          return;
        default:
          echo();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

interface Echo {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string;
}
const parse = (r: { result: string }): Echo => JSON.parse(r.result) as Echo;

const vars: Record<string, unknown> = {
  'sys.query': 'hello world',
  'begin@n': 42,
  'begin@tags': ['a', 'b'],
  'begin@obj': { k: 'v' },
  'env.token': 'secret',
  'begin@none': null,
};
const resolve: Resolve = (ref) => vars[ref];

describe('invokeHttp', () => {
  it('GET sends variables as the query, refs first, templates rendered', async () => {
    const r = await invokeHttp(
      {
        url: `${base}/echo?fixed=1`,
        method: 'get',
        variables: [
          { key: 'q', ref: 'sys.query' },
          { key: 'n', ref: 'begin@n' },
          { key: 'tags', ref: 'begin@tags' },
          { key: 'obj', ref: 'begin@obj' },
          { key: 'lit', value: 'about {sys.query}!' },
          { key: 'fallback', ref: 'begin@none', value: 'dflt' },
          { key: 'missing', ref: 'begin@none' },
          { key: 'num', value: '1.0' },
          { key: 'jsonlist', value: '["x","y"]' },
        ],
      },
      { allow: [base], resolve },
    );
    const e = parse(r);
    expect(e.method).toBe('GET');
    const q = new URLSearchParams(e.query);
    expect(q.get('fixed')).toBe('1');
    expect(q.get('q')).toBe('hello world');
    expect(q.get('n')).toBe('42');
    expect(q.getAll('tags')).toEqual(['a', 'b']);
    expect(q.get('obj')).toBe('{"k": "v"}');
    expect(q.get('lit')).toBe('about hello world!');
    expect(q.get('fallback')).toBe('dflt');
    expect(q.get('missing')).toBe('');
    expect(q.get('num')).toBe('1.0');
    expect(q.getAll('jsonlist')).toEqual(['x', 'y']);
  });

  it('renders references in the URL and adds http:// when the scheme is missing', async () => {
    const r = await invokeHttp({ url: `127.0.0.1:${port}/items/{begin@n}` }, { allow: ['127.0.0.1'], resolve });
    expect(parse(r).path).toBe('/items/42');
  });

  it('POST json sends a JSON body; JSON text in a value is parsed', async () => {
    const r = await invokeHttp(
      {
        url: `${base}/echo`,
        method: 'POST',
        datatype: 'json',
        variables: [
          { key: 'q', ref: 'sys.query' },
          { key: 'n', ref: 'begin@n' },
          { key: 'payload', value: '{"a": [1, 2]}' },
          { key: 'text', value: 'not json' },
          { key: 'uni', value: 'café' },
        ],
      },
      { allow: ['*'], resolve },
    );
    const e = parse(r);
    expect(e.method).toBe('POST');
    expect(e.headers['content-type']).toBe('application/json');
    expect(JSON.parse(e.body)).toEqual({ q: 'hello world', n: 42, payload: { a: [1, 2] }, text: 'not json', uni: 'café' });
    expect(e.body).toContain('"caf\\u00e9"'); // requests' json= escapes non-ASCII
  });

  it('POST / PUT formdata send an urlencoded body', async () => {
    for (const method of ['post', 'put']) {
      const r = await invokeHttp(
        { url: `${base}/echo`, method, datatype: 'formdata', variables: [{ key: 'q', ref: 'sys.query' }, { key: 'tags', ref: 'begin@tags' }, { key: 'j', value: '{"a":1}' }] },
        { allow: [base], resolve },
      );
      const e = parse(r);
      expect(e.method).toBe(method.toUpperCase());
      expect(e.headers['content-type']).toBe('application/x-www-form-urlencoded');
      const f = new URLSearchParams(e.body);
      expect(f.get('q')).toBe('hello world');
      expect(f.getAll('tags')).toEqual(['a', 'b']);
      expect(f.get('j')).toBe('{"a":1}');
    }
  });

  it('sends headers with {name} placeholders; a given Content-Type is kept', async () => {
    const r = await invokeHttp(
      {
        url: `${base}/echo`,
        method: 'post',
        headers: JSON.stringify({ Authorization: 'Bearer {env.token}', 'X-Q': '{sys.query}', 'X-Lit': '{Agent:A@x}', 'X-Num': 5, 'Content-Type': 'application/vnd.x+json' }),
        variables: [{ key: 'a', value: 1 }],
      },
      { allow: [base], resolve },
    );
    const h = parse(r).headers;
    expect(h.authorization).toBe('Bearer secret');
    expect(h['x-q']).toBe('hello world');
    expect(h['x-lit']).toBe('{Agent:A@x}');
    expect(h['x-num']).toBe('5');
    expect(h['content-type']).toBe('application/vnd.x+json');
  });

  it('inputs (kwargs) win over the canvas', async () => {
    const r = await invokeHttp({ url: `${base}/echo`, variables: [{ key: 'q', ref: 'sys.query' }] }, { allow: [base], resolve, inputs: { 'sys.query': 'override' } });
    expect(new URLSearchParams(parse(r).query).get('q')).toBe('override');
  });

  it('returns the body of an error status as the result', async () => {
    expect(await invokeHttp({ url: `${base}/fail` }, { allow: [base] })).toEqual({ result: 'boom' });
  });

  it('decodes by the response charset', async () => {
    expect(await invokeHttp({ url: `${base}/latin1` }, { allow: [base] })).toEqual({ result: 'café' });
  });

  it('clean_html returns the text of the page', async () => {
    const r = await invokeHttp({ url: `${base}/html`, clean_html: true }, { allow: [base] });
    expect(r.result).toBe('Title here\nFirst para\nsecond line\nBlock bold text\none\ntwo\nk | v\na | 1');
    const raw = await invokeHttp({ url: `${base}/html` }, { allow: [base] });
    expect(raw.result).toBe(PAGE);
  });

  it('times out after `timeout` seconds', async () => {
    const t0 = Date.now();
    await expect(invokeHttp({ url: `${base}/slow`, timeout: 1 }, { allow: [base] })).rejects.toThrow(/^Http request error: timed out after 1s/);
    expect(Date.now() - t0).toBeLessThan(2500);
  });

  it('an aborted signal stops the request with its reason', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('cancelled by user')), 100);
    await expect(invokeHttp({ url: `${base}/slow`, max_retries: 3 }, { allow: [base], signal: ac.signal })).rejects.toThrow('cancelled by user');
  });

  it('retries a failed request max_retries times', async () => {
    flakyHits = 0;
    await expect(invokeHttp({ url: `${base}/flaky` }, { allow: [base] })).rejects.toThrow(/^Http request error: fetch failed/);
    flakyHits = 0;
    const r = await invokeHttp({ url: `${base}/flaky`, max_retries: 1, delay_after_error: 0.05 }, { allow: [base] });
    expect(parse(r).path).toBe('/flaky');
  });

  it('follows redirects, checking each hop against the allow-list', async () => {
    const r = await invokeHttp({ url: `${base}/redirect`, method: 'post', variables: [{ key: 'a', value: 1 }] }, { allow: [base] });
    const e = parse(r);
    expect(e.method).toBe('GET'); // 302 after POST becomes GET, as requests does
    expect(e.query).toBe('?from=redirect');
    expect(e.body).toBe('');
    await expect(invokeHttp({ url: `${base}/redirect-out` }, { allow: [base] })).rejects.toThrow(
      `Http request error: redirect to http://localhost:${port}/echo refused: Invoke may not call host 'localhost:${port}'`,
    );
    const ok = await invokeHttp({ url: `${base}/redirect-out` }, { allow: [base, 'localhost'] });
    expect(parse(ok).path).toBe('/echo');
  });

  it('refuses hosts outside the allow-list before sending anything', async () => {
    await expect(invokeHttp({ url: `${base}/echo` }, { allow: [] })).rejects.toThrow(
      `Invoke is not enabled: the Invoke allow-list is empty, so host '127.0.0.1:${port}' may not be called; add '${base}' (or the host name '127.0.0.1') to the Invoke allow-list, or '*' to allow any host.`,
    );
    await expect(invokeHttp({ url: 'http://example.com/x' }, { allow: [base] })).rejects.toThrow(
      "Invoke may not call host 'example.com': it is not in the Invoke allow-list; add 'http://example.com' (or the host name 'example.com') to the Invoke allow-list, or '*' to allow any host.",
    );
  });

  it('reports bad parameters with RAGFlow\'s messages', async () => {
    await expect(invokeHttp({ url: `${base}/echo`, method: 'delete' }, { allow: ['*'] })).rejects.toThrow(
      "Type of content from the crawler delete is not supported, it should be in ['get', 'post', 'put']",
    );
    await expect(invokeHttp({ url: '' }, { allow: ['*'] })).rejects.toThrow('End point URL does not support empty value.');
    await expect(invokeHttp({ url: base, timeout: 0 }, { allow: ['*'] })).rejects.toThrow('Timeout time in second 0 not supported, should be positive integer');
    await expect(invokeHttp({ url: base, datatype: 'xml' }, { allow: ['*'] })).rejects.toThrow("Data post type xml is not supported, it should be in ['json', 'formdata']");
    expect(() => checkInvokeParams({ url: 'x', clean_html: 'yes' as unknown as boolean })).toThrow('Clean HTML yes not supported, should be bool type');
    await expect(invokeHttp({ url: 'http://exa mple.com:99999/' }, { allow: ['*'] })).rejects.toThrow('Invoke URL is not valid: http://exa mple.com:99999/');
    await expect(invokeHttp({ url: base, headers: '{bad' }, { allow: ['*'] })).rejects.toThrow('Invoke headers are not valid JSON');
    await expect(invokeHttp({ url: base, headers: '[1]' }, { allow: ['*'] })).rejects.toThrow('Invoke headers must be a JSON object.');
    await expect(
      invokeHttp({ url: base, method: 'post', variables: [{ key: 'x', ref: 'begin@nan' }] }, { allow: ['*'], resolve: () => NaN }),
    ).rejects.toThrow("Invoke JSON argument 'x' is not JSON-serializable.");
  });
});

describe('invokeRefusal', () => {
  it('matches origins, host names, host:port, wildcards and *', () => {
    expect(invokeRefusal('http://api.example.com/x', ['api.example.com'])).toBeUndefined();
    expect(invokeRefusal('https://API.example.com:8443/x', ['api.example.com'])).toBeUndefined();
    expect(invokeRefusal('https://api.example.com/x', ['https://api.example.com'])).toBeUndefined();
    expect(invokeRefusal('http://api.example.com/x', ['https://api.example.com'])).toContain('may not call');
    expect(invokeRefusal('https://api.example.com/x', ['api.example.com:443'])).toBeUndefined();
    expect(invokeRefusal('https://api.example.com:8443/x', ['api.example.com:443'])).toContain('may not call');
    expect(invokeRefusal('https://a.b.example.com/x', ['*.example.com'])).toBeUndefined();
    expect(invokeRefusal('https://example.com/x', ['*.example.com'])).toContain('may not call');
    expect(invokeRefusal('https://evil-example.com/x', ['*.example.com'])).toContain('may not call');
    expect(invokeRefusal('https://example.com.evil.io/x', ['example.com'])).toContain('may not call');
    expect(invokeRefusal('http://[::1]:8080/x', ['[::1]'])).toBeUndefined();
    expect(invokeRefusal('http://anything.io/', ['*'])).toBeUndefined();
    expect(invokeRefusal('ftp://example.com/', ['*'])).toBe('Invoke supports http and https URLs only: ftp://example.com/');
    expect(invokeRefusal('http://', ['*'])).toBe('Invoke URL is not valid: http://');
  });
});

describe('htmlToText', () => {
  it('drops scripts and styles, one line per block', () => {
    expect(htmlToText('<p>a <i>b</i></p><script>x()</script><p>\n c \n</p>')).toBe('a b\nc');
    expect(htmlToText('plain text')).toBe('plain text');
  });
});
