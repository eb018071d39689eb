/**
 * The reader of the docs' TypeScript examples (test/support/doc-examples.ts) on its own: every
 * block of this repository parses, and a mistaken comment above a block fails loudly. The examples
 * themselves are compiled and run by test/client/tarball.test.ts, from the packed package.
 */
import { describe, expect } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from '../helpers.js';
import { docExamples, exampleSource } from '../support/doc-examples.js';

const ROOT = resolve(import.meta.dirname, '../..');

function repo(dir: string, md: string): string {
  mkdirSync(join(dir, 'docs'), { recursive: true });
  writeFileSync(join(dir, 'README.md'), '# x\n');
  writeFileSync(join(dir, 'docs', 'a.md'), md);
  return dir;
}

describe('docExamples()', () => {
  test('every ts block of README.md and docs/ parses; those that do not run say why', () => {
    const all = docExamples(ROOT);
    expect(all.length).toBeGreaterThan(15);
    for (const e of all) if (e.mode !== 'run') expect(e.reason, e.where).toBeTruthy();
    const chat = all.find((e) => e.code.includes('client.chatCompletion(chat.id'))!;
    expect(chat).toMatchObject({ mode: 'run', prelude: 'chat', files: ['intro'] });
    expect(exampleSource(chat)).toMatch(/^\/\/ docs\/chat\.md:\d+ \(prelude: chat\)\n[\s\S]*const chat = await client\.createChat[\s\S]*client\.chatCompletion[\s\S]*await client\.close\(\);\nexport \{\};\n$/);
  });

  test('reads the comment above a fence; other languages\' blocks are left alone', ({ dir }) => {
    const got = docExamples(repo(dir, [
      '```sh', '```ts inside a shell block', '```', '',
      '<!-- example: prelude=dataset files=intro needs=openai,zod -->', '```ts', 'one();', '```', '',
      '<!-- example: compile-only — needs a server -->', '```typescript', 'two();', '```', '',
      '```ts', 'three();', '```', '',
      '<!-- example: llm needs=ai -->', '```ts', 'four();', '```',
    ].join('\n')));
    expect(got.map((e) => [e.where, e.mode, e.code, e.prelude, e.files, e.needs, e.reason, e.llm])).toEqual([
      ['docs/a.md:6', 'run', 'one();', 'dataset', ['intro'], ['openai', 'zod'], undefined, false],
      ['docs/a.md:11', 'compile-only', 'two();', undefined, [], [], 'needs a server', false],
      ['docs/a.md:15', 'run', 'three();', undefined, [], [], undefined, false],
      ['docs/a.md:20', 'run', 'four();', undefined, [], ['ai'], undefined, true],
    ]);
  });

  test.for([
    ['<!-- example: complie-only — typo -->', 'unknown example directive "complie-only"'],
    ['<!-- example: skip -->', '"skip" needs a reason after an em dash'],
    ['<!-- example: prelude=nope -->', 'no prelude "nope"'],
    ['<!-- example: files=nope -->', 'no folder test/client/examples/files/nope'],
  ])('%s fails: %s', ([comment, message], { dir }) => {
    expect(() => docExamples(repo(dir, `${comment}\n\`\`\`ts\nx();\n\`\`\`\n`))).toThrow(message);
  });
});
