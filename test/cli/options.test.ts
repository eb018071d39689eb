/**
 * What every `ragloom` command shares (issue 19 item 5): `--help`, `--version`, `--json`, errors
 * that name the flag, out-of-range values refused, and read-only commands that never create a
 * database they were pointed at by mistake.
 */
import { describe, expect, afterEach, vi } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../helpers.js';
import { COMMANDS } from '../../src/cli/main.js';
import { main } from '../../src/cli/main.js';
import { VERSION as LIBRARY_VERSION } from '../../src/index.js';
import { run, runJson } from './run.js';

afterEach(() => vi.restoreAllMocks());

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Every command line that has its own help: `ingest`, `models ls`, … */
const COMMAND_LINES = Object.entries(COMMANDS).flatMap(([name, c]) =>
  c.subcommands ? [[name], ...Object.keys(c.subcommands).map((s) => [name, s])] : [[name]]);

function notes(dir: string): string {
  const f = join(dir, 'notes');
  mkdirSync(f, { recursive: true });
  writeFileSync(join(f, 'nozzles.md'), '# Nozzles\n\nA convergent-divergent nozzle accelerates gas to supersonic speed.\n');
  writeFileSync(join(f, 'heat.txt'), 'Heat conduction in composite slabs is solved with Laplace transforms.\n');
  return f;
}

describe('ragloom --help / --version', () => {
  test.each(COMMAND_LINES.map((words) => [words.join(' '), words]))('ragloom %s --help prints its usage and exits 0', async (_name, words) => {
    const r = await run([...(words as string[]), '--help']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain(`ragloom ${(words as string[]).join(' ')}`);
    expect(r.out).toMatch(/usage/i);
  });

  test('ragloom --help lists every command; ragloom help <command> is <command> --help', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const words of COMMAND_LINES.filter((w) => w.length === 2 || !COMMANDS[w[0]!]!.subcommands)) expect(r.out).toContain(`ragloom ${words.join(' ')}`);
    expect((await run(['help', 'retrieve'])).out).toContain('--threshold T');
    const h = await run(['ingest', '--help']);
    for (const flag of ['--dataset NAME', '--db FILE', '--chunk-method M', '--sync', '--json', '--help', '--progress', '--quiet']) expect(h.out).toContain(flag);
  });

  test('ragloom --version; with --json', async () => {
    expect(await run(['--version'])).toEqual({ code: 0, out: `${VERSION}\n`, err: '' });
    expect((await runJson(['--version'])).json).toEqual({ version: VERSION });
    // The library's exported VERSION is written by hand: it must follow package.json.
    expect(LIBRARY_VERSION).toBe(VERSION);
  });
});

describe('errors name the flag; out-of-range values are refused', () => {
  test.each([
    [['retrieve', 'q', '--top', 'ten'], "--top must be a whole number, got 'ten'"],
    [['retrieve', 'q', '--top', '2.5'], "--top must be a whole number, got '2.5'"],
    [['retrieve', 'q', '--top', '0'], '--top must be between 1 and 1024, got 0'],
    [['search', 'q', '--threshold', '1.5'], '--threshold must be a number between 0 and 1, got 1.5'],
    [['retrieve', 'q', '--weight', '-0.1'], '--weight must be a number between 0 and 1, got -0.1'],
    [['retrieve', 'q', '--weight', 'high'], "--weight must be a number between 0 and 1, got 'high'"],
    [['retrieve', 'q', '--topp', '3'], 'unknown option --topp; did you mean --top?'],
    [['retrieve', 'q', '--top'], '--top needs a value (--top N)'],
    [['retrieve'], 'missing <question>'],
    [['retrieve', 'a', 'b'], 'unexpected argument "b"'],
    [['ingest'], 'missing <folder|file>'],
    [['ingest', '.', '--chunk-method', 'fancy'], "--chunk-method must be one of naive, book, email, laws, manual, one, paper, picture, presentation, qa, table, tag, resume; got 'fancy'"],
    [['ingest', '.', '--dataset', ''], '--dataset needs a value'],
    [['ingest', '.', '--sync=yes'], '--sync takes no value'],
    [['serve', '--port', '70000'], '--port must be between 0 and 65535, got 70000'],
    [['ask', 'q', '--model', 'llama3@Ollama'], '--model needs --base-url URL'],
    [['ask', 'q', '--model', 'llama3', '--base-url', 'http://127.0.0.1:9/v1'], "--model must be NAME@FACTORY (e.g. llama3@Ollama), got 'llama3'"],
    [['models', 'fetch'], 'unknown command "fetch"; one of: ls, pull'],
    [['models', 'lss'], 'unknown command "lss"; did you mean "ls"? (one of: ls, pull)'],
    [['retreive', 'q'], 'unknown command "retreive"; did you mean "retrieve"?'],
    [['Serve'], 'unknown command "Serve"; did you mean "serve"?'],
    [['migrate', 'exprot'], 'unknown migrate command "exprot"; did you mean "export"?'],
    [['ask', 'q', '--base-url', 'http://127.0.0.1:9/v1'], '--base-url needs --model NAME@FACTORY'],
    [['ask', 'q', '--api-key', 'k'], '--api-key goes with --model and --base-url'],
    [['ask', 'q', '--model', 'llama3@Ollama', '--base-url', 'not a url'], "--base-url must be a URL such as http://127.0.0.1:11434/v1, got 'not a url'"],
    [['agent', 'run', 'dataset_chatbot', '--model', 'llama3@Ollama'], '--model needs --base-url URL'],
    [['list', '--db', ':memory:'], '--db :memory: holds nothing to read'],
    [['list', '--db', 'src'], '--db src is a folder, not a database file'],
  ])('ragloom %j', async (args, message) => {
    const r = await run(args as string[]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toContain(message);
  });

  test('a misspelt command gets the nearest one in two lines, not the whole usage', async () => {
    const r = await run(['retreive', 'how do tides work']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('ragloom: unknown command "retreive"; did you mean "retrieve"?\n'
      + 'Commands: quickstart, ingest, list, retrieve, ask, models, serve, mcp, agent, migrate, workspace (ragloom --help describes each)\n');
    const far = await run(['frobnicate']);
    expect(far.err).toBe('ragloom: unknown command "frobnicate"\n'
      + 'Commands: quickstart, ingest, list, retrieve, ask, models, serve, mcp, agent, migrate, workspace (ragloom --help describes each)\n');
  });

  test('a usage error says the command, its usage line and where the options are', async ({ dir }) => {
    const r = await run(['retrieve', 'q', '--threshold', '1.5', '--db', join(dir, 'kb.db')]);
    expect(r.err).toBe([
      'ragloom retrieve: --threshold must be a number between 0 and 1, got 1.5',
      'Usage: ragloom retrieve <question> [--dataset NAME]... [--db FILE] [--top N] [--weight W] [--threshold T]',
      '(ragloom retrieve --help lists every option)',
      '',
    ].join('\n'));
    expect(existsSync(join(dir, 'kb.db'))).toBe(false);
  });

  test('with --json the error is JSON on stdout', async () => {
    const r = await runJson(['retrieve', 'q', '--top', 'x']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('');
    expect(r.json).toEqual({ error: { code: 'usage', message: "--top must be a whole number, got 'x'" } });
  });
});

describe('read-only commands and a --db that does not exist', () => {
  test.each([
    ['list', []], ['retrieve', ['a question']], ['search', ['a question']], ['ask', ['a question']],
  ])('ragloom %s refuses it and creates nothing', async (cmd, args) => {
    const { dir } = { dir: join((await import('node:os')).tmpdir(), `ragloom-missing-${process.pid}-${cmd}`) };
    const db = join(dir, 'typo.db');
    const r = await run([cmd, ...args, '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`--db ${db}: no such database (this command only reads; \`ragloom ingest <folder> --db ${db}\` creates one)`);
    expect(existsSync(db)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });

  test('a dataset that does not exist is named by its flag', async ({ dir }) => {
    const db = join(dir, 'kb.db');
    await run(['ingest', notes(dir), '--db', db]);
    const r = await run(['retrieve', 'x', '--dataset', 'ghost', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`--dataset ghost: no such dataset in ${db}`);
  });
});

describe('--json: machine-readable output of every command', () => {
  test('ingest, list, list --dataset, retrieve, search, ask', async ({ dir }) => {
    const db = join(dir, 'kb.db');
    const ing = await runJson(['ingest', notes(dir), '--db', db]);
    expect(ing.json).toMatchObject({ dataset: { name: 'notes' }, added: 2, updated: 0, unchanged: 0, removed: 0, db });

    const ls = await runJson<{ datasets: Array<Record<string, unknown>> }>(['list', '--db', db]);
    expect(ls.json.datasets).toEqual([expect.objectContaining({ name: 'notes', document_count: 2, chunk_count: 2, chunk_method: 'naive' })]);
    const docs = await runJson<{ documents: Array<Record<string, unknown>> }>(['list', '--db', db, '--dataset', 'notes']);
    expect(docs.json.documents.map((d) => [d.name, d.run, d.chunk_count])).toEqual([['heat.txt', 'DONE', 1], ['nozzles.md', 'DONE', 1]]);
    const text = await run(['list', '--db', db]);
    expect(text.out).toMatch(/^NAME\s+DOCUMENTS\s+CHUNKS/);

    for (const cmd of ['retrieve', 'search']) {
      const r = await runJson<{ chunks: Array<Record<string, unknown>> }>([cmd, 'supersonic nozzle', '--db', db, '--top', '1']);
      expect(r.code).toBe(0);
      expect(r.json.chunks).toEqual([expect.objectContaining({ rank: 1, document_name: 'nozzles.md' })]);
      expect(r.json.chunks[0]!.similarity).toBeGreaterThan(0);
    }
    const ask = await runJson<{ answer: string; sources: Array<{ document_name: string }> }>(['ask', 'How is heat conduction in slabs solved?', '--db', db]);
    expect(ask.code).toBe(0);
    expect(ask.json.answer).toContain('Laplace');
    expect(ask.json.sources.map((s) => s.document_name)).toContain('heat.txt');
  });

  test('models ls, agent templates, workspace show / add / ls, serve', async ({ dir }) => {
    const m = await runJson<{ models: Array<{ id: string; dim: number }> }>(['models', 'ls']);
    expect(m.json.models).toContainEqual({ id: 'ragloom-static-en-256@Builtin', dim: 256 });
    const t = await runJson<{ templates: Array<{ name: string }> }>(['agent', 'templates']);
    expect(t.json.templates.map((x) => x.name)).toContain('dataset_chatbot');

    const ws = join(dir, 'ws');
    const add = await runJson<{ created: string }>(['workspace', 'add', ws, 'dataset', '--name', 'bugs', '--type', 'detection_voc']);
    expect(add.json.created).toBe('D0001');
    const show = await runJson<{ kinds: Array<{ kind: string; count: number }> }>(['workspace', 'show', ws]);
    expect(show.json.kinds).toContainEqual(expect.objectContaining({ kind: 'dataset', count: 1 }));
    const list = await runJson<{ dataset: Array<{ id: string; name: string }> }>(['workspace', 'ls', ws, 'dataset']);
    expect(list.json.dataset.map((d) => [d.id, d.name])).toEqual([['D0001', 'bugs']]);
    const bad = await runJson(['workspace', 'rm', ws, 'dataset', 'D0009']);
    expect(bad.code).toBe(1);
    expect(bad.json).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });

    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((c) => ((out += String(c)), true));
    const serving = main(['serve', '--db', join(dir, 'srv.db'), '--port', '0', '--json']);
    for (let i = 0; i < 400 && !out.includes('\n'); i++) await new Promise((ok) => setTimeout(ok, 25));
    process.emit('SIGTERM');
    expect(await serving).toBe(0);
    vi.restoreAllMocks();
    const banner = JSON.parse(out.trim()) as { url: string; api_key: string | null; db: string };
    expect(banner.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    expect(banner.api_key).toMatch(/^ragflow-/);
  });
});
