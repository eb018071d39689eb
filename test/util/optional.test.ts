import { describe, expect, it } from 'vitest';
import { importOptional, MissingPackageError } from '../../src/util/index.js';
import { exceptionError } from '../../src/api/errors.js';

describe('optional packages', () => {
  it('a package that is not installed becomes an error naming it and its install command', async () => {
    // A real failed import of a package that does not exist, reported for an optional one.
    const load = () => import('@ragloom-test/' + 'not-installed-package');
    const e = await importOptional('@gutenye/ocr-node', 'OCR (test)', () =>
      load().catch((err: { message: string }) => {
        // Node names the missing specifier; rewrite it as if it were the optional package.
        throw Object.assign(new Error(err.message.replace('@ragloom-test/not-installed-package', '@gutenye/ocr-node')), { code: (err as { code?: string }).code });
      }),
    ).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(MissingPackageError);
    expect((e as Error).message).toBe('OCR (test) needs the optional package @gutenye/ocr-node, which is not installed: run `npm install @gutenye/ocr-node`');
    const api = exceptionError(e);
    expect([api.code, api.message]).toEqual([102, (e as Error).message]);
  });

  it('an installed package loads; a broken one keeps its own error', async () => {
    const m = await importOptional('@huggingface/transformers', 'test', () => import('node:path'));
    expect(typeof m.join).toBe('function');
    const other = Object.assign(new Error("Cannot find package 'left-pad' imported from x"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(importOptional('@huggingface/transformers', 'test', () => Promise.reject(other))).rejects.toBe(other);
  });
});
