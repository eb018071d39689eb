import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, SAVE_STEPS } from '../../src/workspace/index.js';

const doc = () => readFile(new URL('../../docs/workspace.md', import.meta.url), 'utf8');

describe('docs/workspace.md', () => {
  it('lists exactly the error codes of the catalogue', async () => {
    const text = await doc();
    const section = text.slice(text.indexOf('## Errors'), text.indexOf('## PaddleX behaviour'));
    const documented = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...ERROR_CODES].sort());
  });

  it('describes every save step', async () => {
    const text = await doc();
    for (const step of SAVE_STEPS) expect(text).toContain(`| \`${step}\` |`);
  });
});
