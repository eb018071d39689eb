/**
 * The TypeScript examples of README.md and docs/*.md (every ```ts or ```typescript block), for
 * test/client/tarball.test.ts: each is type-checked (strict, skipLibCheck: false) and run in a blank
 * project where the packed tarball is installed, as a user would paste it.
 *
 * A block says what it needs, or why it cannot run here, in an HTML comment on the line right
 * above its fence (invisible when the Markdown is rendered):
 *
 *     <!-- example: prelude=chat files=intro needs=openai -->
 *     <!-- example: compile-only — needs an Ollama server on 127.0.0.1:11434 -->
 *     <!-- example: skip — an internal module (src/ingest/parsers), not in the package -->
 *
 * - `prelude=NAME`: code put around the block, from test/client/examples/preludes.ts (a client
 *   with a parsed dataset, a running server with a chat, or only `declare`d names for a block that
 *   is compiled, not run). Its `after` part runs after the block (closing what it opened).
 * - `files=NAME,…`: the files of test/client/examples/files/NAME/ are copied into the folder the
 *   example runs in (`intro.md` for `readFile('intro.md')`).
 * - `needs=PKG,…`: npm packages the example imports besides ragloom (`openai`); they are
 *   installed in the blank project at the version this repository's lockfile has.
 * - `llm`: it talks to an OpenAI-compatible model (`OPENAI_BASE_URL`, `OPENAI_API_KEY`): it runs
 *   against a loopback stand-in (test/support/chat-server.ts `contextAnswer`: it calls the first
 *   tool it is offered, then answers with the sentence of what it was sent that best matches the
 *   question), which must find its answer there, and the example must print it.
 * - `compile-only — why`: type-checked, not run (it needs a service that is not here).
 * - `skip — why`: neither (a contributor's example of an internal module).
 *
 * A block without a comment is compiled and run as it is. A word the parser does not know, a
 * missing reason, or an unknown prelude or file folder fails the test.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { PRELUDES } from '../client/examples/preludes.js';

export const EXAMPLES_DIR = join(import.meta.dirname, '..', 'client', 'examples');

export interface DocExample {
  /** `docs-chat-md-3`: a file-system-safe name. */
  id: string;
  /** `docs/chat.md:106`: where the fence is. */
  where: string;
  code: string;
  mode: 'run' | 'compile-only' | 'skip';
  reason?: string;
  prelude?: string;
  files: string[];
  needs: string[];
  /** Run against the loopback OpenAI-protocol stand-in (`OPENAI_BASE_URL`). */
  llm: boolean;
}

const DIRECTIVE = /^<!--\s*example:\s*(.*?)\s*-->$/;

function parseDirective(text: string, where: string): Pick<DocExample, 'mode' | 'reason' | 'prelude' | 'files' | 'needs' | 'llm'> {
  const [words, ...why] = text.split(/\s+—\s+|\s+--\s+/);
  const out: Pick<DocExample, 'mode' | 'reason' | 'prelude' | 'files' | 'needs' | 'llm'> = { mode: 'run', files: [], needs: [], llm: false };
  for (const w of (words ?? '').split(/\s+/).filter(Boolean)) {
    const [k, v] = w.split('=') as [string, string | undefined];
    if (v === undefined && (k === 'skip' || k === 'compile-only')) out.mode = k;
    else if (v === undefined && k === 'llm') out.llm = true;
    else if (k === 'prelude' && v) out.prelude = v;
    else if (k === 'files' && v) out.files = v.split(',');
    else if (k === 'needs' && v) out.needs = v.split(',');
    else throw new Error(`${where}: unknown example directive "${w}" (see test/support/doc-examples.ts)`);
  }
  out.reason = why.join(' — ').trim() || undefined;
  if (out.mode !== 'run' && !out.reason) throw new Error(`${where}: "${out.mode}" needs a reason after an em dash`);
  if (out.prelude && !PRELUDES[out.prelude]) throw new Error(`${where}: no prelude "${out.prelude}" in test/client/examples/preludes.ts`);
  for (const f of out.files) if (!existsSync(join(EXAMPLES_DIR, 'files', f))) throw new Error(`${where}: no folder test/client/examples/files/${f}`);
  return out;
}

/** Every ```ts block of README.md and docs/*.md, in file order. */
export function docExamples(root: string): DocExample[] {
  const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
  const out: DocExample[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    let n = 0;
    for (let i = 0; i < lines.length; i++) {
      if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) {
        // Another language's block: skipped to its closing fence (a bare ```).
        if (/^```/.test(lines[i]!)) for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++);
        continue;
      }
      const where = `${file}:${i + 1}`;
      const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
      if (end < 0) throw new Error(`${where}: the block is not closed`);
      const above = i > 0 ? DIRECTIVE.exec(lines[i - 1]!.trim()) : null;
      const d = above ? parseDirective(above[1]!, where) : { mode: 'run' as const, files: [], needs: [], llm: false };
      out.push({ id: `${file.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}-${++n}`, where, code: lines.slice(i + 1, end).join('\n'), ...d });
      i = end;
    }
  }
  return out;
}

/** The module an example compiles to: its prelude's `before`, the block, the prelude's `after`. */
export function exampleSource(ex: DocExample): string {
  const p = ex.prelude ? PRELUDES[ex.prelude]! : { before: '', after: '' };
  // `export {}`: a module, whatever the block holds (top-level await, names of its own).
  return [`// ${ex.where}${ex.prelude ? ` (prelude: ${ex.prelude})` : ''}`, p.before, ex.code, p.after ?? '', 'export {};', ''].join('\n');
}
