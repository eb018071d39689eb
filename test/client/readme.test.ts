import { expect } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { test } from '../helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

// The README's example must run as written (with the package name pointed at the sources).
test("README's example program runs and prints what it says", ({ dir }) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const code = /## Example\s+(?:<!--[^\n]*-->\s+)?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(code, 'README has an ## Example ts block').toBeTruthy();
  writeFileSync(join(dir, 'intro.md'), '# Intro\n\nTo reset your password, open Settings and choose Reset password.\n');
  writeFileSync(join(dir, 'example.mts'), code!.replace("from 'ragloom'", `from ${JSON.stringify(join(ROOT, 'src/index.ts'))}`));
  const out = execFileSync(process.execPath, ['--import', import.meta.resolve('tsx'), 'example.mts'], { cwd: dir, encoding: 'utf8' });
  expect(out).toMatch(/^DONE 1$/m);
  expect(out).toMatch(/^\d\.\d{3} intro\.md [\s\S]*reset your password/m);
  // The chat's answer: a sentence of intro.md with its citation, then the cited document.
  expect(out).toMatch(/open Settings and choose Reset password\.? ?\[ID:0\][^\n]*intro\.md/);
  expect(out).toContain("101 Field: <name> - Message: <String should have at least 1 character>");
}, 120_000);

// docs/agents.md's first example must run as written too.
test("docs/agents.md's example runs and prints what it says", ({ dir }) => {
  const doc = readFileSync(join(ROOT, 'docs/agents.md'), 'utf8');
  const code = /## A runnable example\s+```ts\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(code, 'docs/agents.md has a runnable ts block').toBeTruthy();
  writeFileSync(join(dir, 'agent.mts'), code!.replace("from 'ragloom'", `from ${JSON.stringify(join(ROOT, 'src/index.ts'))}`));
  const out = execFileSync(process.execPath, ['--import', import.meta.resolve('tsx'), 'agent.mts'], { cwd: dir, encoding: 'utf8' });
  expect(out).toMatch(/^Ask me about the handbook\.$/m);
  expect(out).toMatch(/^Employees get 25 days of paid leave a year\..*\[ID:0\]$/m);
  expect(out).toMatch(/^leave\.md$/m);
  expect(out).toMatch(/^begin \d/m);
  expect(out).toMatch(/^Message:Reply \d/m);
  expect(out).toMatch(/^workflow_started $/m);
  expect(out).toMatch(/^node_finished Message:Reply$/m);
  expect(out).toMatch(/^workflow_finished $/m);
}, 120_000);
