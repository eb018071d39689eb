/**
 * What every `ragloom` subcommand shares: its option table (which also writes its `--help`),
 * `--help` / `--json` handling, flag values checked and refused by the flag's own name
 * (`--top must be a whole number`), machine-readable output and errors, `--version`, and the
 * read-only commands' refusal of a `--db` that does not exist.
 *
 * A new subcommand is a {@link Command} (a spec and a `run`) added to `COMMANDS` in main.ts:
 * @example
 * export const hello: Command = {
 *   spec: { name: 'hello', synopsis: '<name> [--times N]', summary: 'greet someone', positionals: { min: 1, max: 1 },
 *     options: { times: { type: 'string', arg: 'N', help: 'how often (1-10)', default: '1' } } },
 *   async run({ values, positionals, json, out }) {
 *     const n = intFlag(values, 'times', { min: 1, max: 10, default: 1 });
 *     if (json) writeJson({ greeting: `hello ${positionals[0]}`, times: n }, out);
 *     else out.write(`hello ${positionals[0]}\n`.repeat(n));
 *     return 0;
 *   },
 * };
 */
import { isPostgresUrl, type PostgresTuning } from '../store/postgres/db.js';
import { parseArgs } from 'node:util';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../client/index.js';

/** The package's version (package.json, two folders up from src/cli and dist/cli alike). */
export const VERSION: string = (JSON.parse(readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../../package.json'), 'utf8')) as { version: string }).version;

/**
 * A bad command line: exit status 1, the message and the command's usage on stderr (or a JSON
 * error with `--json`). The message names the flag as the user typed it.
 */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A failure the user can fix that is not about the command line's shape (a missing file or database). */
export class CliError extends Error {
  override name = 'CliError';
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** The value's placeholder in `--help` (`FILE`, `N`, `TEXT`). */
  arg?: string;
  /** One line for `--help`. */
  help: string;
  /** Shown in `--help` as "(default: …)". */
  default?: string;
}

export interface CommandSpec {
  /** As typed after `ragloom`: `ingest`, or `models pull`. */
  name: string;
  /** What follows the name in the usage line: `<folder|file> [--dataset NAME] [--db FILE]`. */
  synopsis: string;
  /** One line for `ragloom --help` and the top of `--help`. */
  summary: string;
  /** Paragraphs for `--help` after the options. */
  details?: string;
  /** How many positionals (default: none). */
  positionals?: { min: number; max: number };
  /** Options besides `--help` and `--json`, which every command has. */
  options: Record<string, OptionSpec>;
  /** Other names the command answers to (`search` for `retrieve`). */
  aliases?: string[];
}

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

export interface RunContext {
  values: FlagValues;
  positionals: string[];
  /** `--json` was given: print one JSON value (or JSON lines for a conversation) on stdout, nothing else there. */
  json: boolean;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

/**
 * One subcommand. Either a spec-driven command (`spec` + `run`: flags parsed and checked here,
 * `--help` and `--json` handled here) or a group of subcommands (`spec` + `subcommands`:
 * `ragloom models ls`), or a command that reads its own arguments (`spec` + `raw`).
 */
export interface Command {
  spec: CommandSpec;
  run?: (ctx: RunContext) => Promise<number>;
  subcommands?: Record<string, Command>;
  /** Takes the words after the command as they are (it answers `--help` and `--json` itself). */
  raw?: (args: string[]) => Promise<number>;
}

/** The default database file of every command but quickstart. */
export const DEFAULT_DB = 'ragloom.db';

/** `--db FILE`, as every command that opens a database (but quickstart) takes it. */
export const DB_OPTION: Readonly<OptionSpec> = Object.freeze({ type: 'string', arg: 'FILE', help: 'the SQLite database file, or a postgresql:// URL', default: DEFAULT_DB });

/** The environment variables that set a PostgreSQL store's `postgresOptions` for every command. */
export const PG_ENV: Readonly<Record<string, keyof PostgresTuning>> = Object.freeze({
  RAGLOOM_PG_UNREACHABLE_MS: 'unreachableMs',
  RAGLOOM_PG_STATEMENT_TIMEOUT_MS: 'statementTimeoutMs',
  RAGLOOM_PG_IDLE_IN_TRANSACTION_MS: 'idleInTransactionMs',
  RAGLOOM_PG_POOL_SIZE: 'poolSize',
  RAGLOOM_PG_CONNECT_TIMEOUT_MS: 'connectTimeoutMs',
});

/**
 * How a Client or server opens `--db`: a SQLite file, or a PostgreSQL database (`postgresql://` /
 * `postgres://`) with the `postgresOptions` the RAGLOOM_PG_* variables set (their ranges are
 * checked where the store opens: ApiError 101).
 */
export function storeOf(db: string, env: NodeJS.ProcessEnv = process.env): { path: string } | { postgres: string; postgresOptions?: PostgresTuning } {
  if (!isPostgresUrl(db)) return { path: db };
  const options: PostgresTuning = {};
  for (const [name, key] of Object.entries(PG_ENV)) {
    const v = env[name]?.trim();
    if (!v) continue;
    if (!/^\d+$/.test(v)) throw new CliError(`${name} must be a whole number, got '${v}'`);
    options[key] = Number(v);
  }
  return Object.keys(options).length ? { postgres: db, postgresOptions: options } : { postgres: db };
}

/** `--db` as messages show it: a URL without its password. */
export function shownDb(db: string): string {
  return isPostgresUrl(db) ? db.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^@/]*@/i, '$1:***@') : db;
}

/** The database `--db` names, else {@link DEFAULT_DB}. */
export const dbFlag = (values: FlagValues): string => stringFlag(values, 'db') ?? DEFAULT_DB;

/** `--help` and `--json`: every command has them. */
export const COMMON_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  json: { type: 'boolean', help: 'machine-readable output: one JSON value on stdout (errors too, as {"error": {...}})' },
  help: { type: 'boolean', short: 'h', help: 'this help' },
});

/** `ragloom <name> <synopsis>` */
export const usageLine = (spec: CommandSpec): string => `ragloom ${spec.name} ${spec.synopsis}`.trimEnd();

/** The text `ragloom <command> --help` prints. */
export function helpText(cmd: Command): string {
  const s = cmd.spec;
  let text = `Usage: ${usageLine(s)}\n\n${s.summary}\n`;
  if (cmd.subcommands) {
    text += '\nCommands:\n';
    for (const sub of Object.values(cmd.subcommands)) text += `  ${usageLine(sub.spec)}\n      ${sub.spec.summary}\n`;
  }
  const opts = Object.entries({ ...s.options, ...(cmd.raw ? {} : COMMON_OPTIONS) });
  if (opts.length) {
    const left = opts.map(([k, o]) => `${o.short ? `-${o.short}, ` : '    '}--${k}${o.arg ? ` ${o.arg}` : ''}`);
    const w = Math.max(...left.map((l) => l.length));
    text += '\nOptions:\n';
    opts.forEach(([, o], i) => {
      text += `  ${left[i]!.padEnd(w)}  ${o.help}${o.default !== undefined ? ` (default: ${o.default})` : ''}${o.multiple ? ' (repeatable)' : ''}\n`;
    });
  }
  if (s.aliases?.length) text += `\nAlso: ${s.aliases.map((a) => `ragloom ${a}`).join(', ')}\n`;
  if (s.details) text += `\n${s.details.trim()}\n`;
  return text;
}

/** Parses `args` by the spec. Unknown flags, missing values and wrong positional counts are UsageErrors naming them. */
export function parseCommandArgs(spec: CommandSpec, args: string[]): { values: FlagValues; positionals: string[] } {
  const options = { ...spec.options, ...COMMON_OPTIONS };
  let parsed: { values: FlagValues; positionals: string[] };
  // `--weight -0.1`: a value that looks like a negative number is the flag's value, not a flag.
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = args[i + 1];
    if (a.startsWith('--') && !a.includes('=') && options[a.slice(2)]?.type === 'string' && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      joined.push(`${a}=${next}`);
      i++;
    } else joined.push(a);
  }
  try {
    parsed = parseArgs({
      args: joined, allowPositionals: true, strict: true,
      options: Object.fromEntries(Object.entries(options).map(([k, o]) => [k, { type: o.type, ...(o.multiple ? { multiple: true } : {}), ...(o.short ? { short: o.short } : {}) }])),
    }) as { values: FlagValues; positionals: string[] };
  } catch (e) {
    throw new UsageError(parseArgsMessage(e, spec));
  }
  if (parsed.values.help) return parsed;
  const { min, max } = spec.positionals ?? { min: 0, max: 0 };
  const n = parsed.positionals.length;
  if (n > max) throw new UsageError(`unexpected argument "${parsed.positionals[max]}"`);
  if (n < min) throw new UsageError(`missing ${/<[^>]+>/.exec(spec.synopsis)?.[0] ?? 'argument'}`);
  return parsed;
}

/** node:util's parseArgs messages, said with the flag as typed and the command's own hint. */
function parseArgsMessage(e: unknown, spec: CommandSpec): string {
  const code = (e as { code?: string }).code;
  const msg = e instanceof Error ? e.message : String(e);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']+)'/.exec(msg)?.[1] ?? msg;
    const bare = flag.replace(/^-+/, '').split('=')[0]!;
    const near = nearest(bare.toLowerCase().replace(/_/g, '-'), Object.keys(spec.options));
    return `unknown option ${flag}${near ? `; did you mean --${near}?` : ''} (ragloom ${spec.name} --help lists the options)`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /--[\w-]+/.exec(msg)?.[0] ?? '';
    const o = spec.options[flag.slice(2)];
    if (o?.type === 'boolean') return `${flag} takes no value`;
    return `${flag} needs a value${o?.arg ? ` (${flag} ${o.arg})` : ''}`;
  }
  return msg;
}

/** The first five of a list, comma-separated, with `, …` when there are more (for a message). */
export function firstFive(xs: readonly string[]): string {
  return xs.slice(0, 5).join(', ') + (xs.length > 5 ? ', …' : '');
}

/** The name closest to a mistyped one (an option, a command; at most two edits away), if any. */
export function nearest(word: string, names: string[]): string | undefined {
  const dist = (a: string, b: string): number => {
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const cur = [i];
      for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
    return prev[b.length]!;
  };
  let best: string | undefined;
  let bestD = 3;
  for (const n of names) {
    const d = dist(word, n);
    if (d < bestD) [best, bestD] = [n, d];
  }
  return best;
}

const given = (values: FlagValues, name: string): string | undefined => {
  const v = values[name];
  return Array.isArray(v) ? v.at(-1) : typeof v === 'string' ? v : undefined;
};

/** A whole-number flag within [min, max]; refused by the flag's name ("--top must be a whole number, got 'x'"). */
export function intFlag(values: FlagValues, name: string, o: { min: number; max: number; default: number }): number;
export function intFlag(values: FlagValues, name: string, o: { min: number; max: number; default?: undefined }): number | undefined;
export function intFlag(values: FlagValues, name: string, o: { min: number; max: number; default?: number }): number | undefined {
  const raw = given(values, name);
  if (raw === undefined) return o.default;
  const s = raw.trim();
  if (!/^[+-]?\d+$/.test(s)) throw new UsageError(`--${name} must be a whole number, got '${raw}'`);
  const n = Number(s);
  if (n < o.min || n > o.max) throw new UsageError(`--${name} must be between ${o.min} and ${o.max}, got ${s}`);
  return n;
}

/** A decimal flag within [min, max] ("--threshold must be a number between 0 and 1, got 1.5"). */
export function numberFlag(values: FlagValues, name: string, o: { min: number; max: number }): number | undefined {
  const raw = given(values, name);
  if (raw === undefined) return undefined;
  const s = raw.trim();
  const n = s === '' ? NaN : Number(s);
  if (!Number.isFinite(n)) throw new UsageError(`--${name} must be a number between ${o.min} and ${o.max}, got '${raw}'`);
  if (n < o.min || n > o.max) throw new UsageError(`--${name} must be a number between ${o.min} and ${o.max}, got ${s}`);
  return n;
}

/** A flag that takes one of `choices` ("--chunk-method must be one of naive, qa, …; got 'x'"). */
export function choiceFlag<T extends string>(values: FlagValues, name: string, choices: readonly T[]): T | undefined {
  const raw = given(values, name);
  if (raw === undefined) return undefined;
  if (!(choices as readonly string[]).includes(raw)) throw new UsageError(`--${name} must be one of ${choices.join(', ')}; got '${raw}'`);
  return raw as T;
}

/** A string flag that, when given, is not empty ("--dataset needs a value"). */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const raw = given(values, name);
  if (raw !== undefined && raw.trim() === '') throw new UsageError(`--${name} needs a value`);
  return raw;
}

/** Every value of a repeatable string flag, none empty. */
export function listFlag(values: FlagValues, name: string): string[] {
  const v = values[name];
  const list = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
  if (list.some((x) => x.trim() === '')) throw new UsageError(`--${name} needs a value`);
  return list;
}

/**
 * The database a read-only command (`list`, `retrieve`, `ask`) opens: it must exist; opening a
 * missing path would create an empty store and answer "not found" for everything in it.
 */
export function existingDatabase(path: string, flag = '--db'): string {
  // A PostgreSQL database is checked by opening it (a missing one is an ApiError naming it).
  if (isPostgresUrl(path)) return path;
  if (path === ':memory:') throw new CliError(`${flag} :memory: holds nothing to read; give the database file \`ragloom ingest\` wrote`);
  if (!existsSync(path)) throw new CliError(`${flag} ${path}: no such database (this command only reads; \`ragloom ingest <folder> --db ${path}\` creates one)`);
  if (statSync(path).isDirectory()) throw new CliError(`${flag} ${path} is a folder, not a database file`);
  return path;
}

/** One JSON value on its own line (`--json`). */
export function writeJson(value: unknown, out: NodeJS.WritableStream = process.stdout): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** An error as `--json` prints it: `{"error": {"code", "message"}}` (code: the Api's numeric code, else "usage" / "error"). */
export function errorJson(e: unknown): { error: { code: number | string; message: string } } {
  if (e instanceof ApiError) return { error: { code: e.code, message: e.message } };
  return { error: { code: e instanceof UsageError ? 'usage' : 'error', message: e instanceof Error ? e.message : String(e) } };
}

/** How an error reads on stderr: usage errors with the usage line and a pointer to `--help`. */
export function errorText(e: unknown, spec?: CommandSpec): string {
  if (e instanceof UsageError) {
    const where = spec ? `ragloom ${spec.name}: ` : 'ragloom: ';
    return `${where}${e.message}\n${spec ? `Usage: ${usageLine(spec)}\n(ragloom ${spec.name} --help lists every option)\n` : ''}`;
  }
  if (e instanceof ApiError) return `Error ${e.code}: ${e.message}\n`;
  return `${e instanceof Error ? e.message : String(e)}\n`;
}

/** Does `args` ask for JSON? (before they are parsed: an error while parsing is still printed as JSON) */
export const wantsJson = (args: readonly string[]): boolean => args.includes('--json');

/**
 * Runs a command on the words after its name: `--help` prints its help (exit 0); a group picks its
 * subcommand; flags are parsed by the spec; failures print (as text or JSON) and return 1.
 */
export async function runCommand(cmd: Command, args: string[], io: { out?: NodeJS.WritableStream; err?: NodeJS.WritableStream } = {}): Promise<number> {
  const out = io.out ?? process.stdout;
  const err = io.err ?? process.stderr;
  if (cmd.raw) return cmd.raw(args);
  const json = wantsJson(args);
  try {
    if (cmd.subcommands) {
      const [sub, ...rest] = args;
      if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help' || (sub === '--json' && rest.length === 0)) {
        out.write(helpText(cmd));
        return sub === undefined ? 1 : 0;
      }
      const next = cmd.subcommands[sub];
      if (!next) {
        const near = nearest(sub, Object.keys(cmd.subcommands));
        throw new UsageError(`unknown command "${sub}"; ${near ? `did you mean "${near}"? (` : ''}one of: ${Object.keys(cmd.subcommands).join(', ')}${near ? ')' : ''}`);
      }
      return await runCommand(next, rest, io);
    }
    const { values, positionals } = parseCommandArgs(cmd.spec, args);
    if (values.help) {
      out.write(helpText(cmd));
      return 0;
    }
    return await cmd.run!({ values, positionals, json: values.json === true, out, err });
  } catch (e) {
    if (json) writeJson(errorJson(e), out);
    else err.write(errorText(e, cmd.spec));
    return 1;
  }
}

/** `--model` with `--base-url` as the tenant's chat model config (both or neither). */
export function chatModelFlags(c: { values: FlagValues }): Array<{ type: 'chat'; name: string; factory: string; base_url: string; api_key?: string }> {
  const model = stringFlag(c.values, 'model');
  const baseUrl = stringFlag(c.values, 'base-url');
  if (!model && !baseUrl) {
    if (c.values['api-key'] !== undefined) throw new UsageError('--api-key goes with --model and --base-url');
    return [];
  }
  if (!model) throw new UsageError('--base-url needs --model NAME@FACTORY (the model to ask there)');
  if (!baseUrl) throw new UsageError('--model needs --base-url URL (the OpenAI-compatible server that runs it)');
  const at = model.lastIndexOf('@');
  if (at <= 0 || at === model.length - 1) throw new UsageError(`--model must be NAME@FACTORY (e.g. llama3@Ollama), got '${model}'`);
  try {
    new URL(baseUrl);
  } catch {
    throw new UsageError(`--base-url must be a URL such as http://127.0.0.1:11434/v1, got '${baseUrl}'`);
  }
  return [{ type: 'chat', name: model.slice(0, at), factory: model.slice(at + 1), base_url: baseUrl, api_key: stringFlag(c.values, 'api-key') }];
}

/** Resolves on SIGINT or SIGTERM (a server command's end), or when `also` resolves. */
export function untilStopped(also?: Promise<void>): Promise<void> {
  return new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    void also?.then(stop);
  });
}
