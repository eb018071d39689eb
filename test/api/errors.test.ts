import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { CATALOGUE, ApiError, RetCode } from '../../src/api/errors.js';
import { ApiError as PublicApiError } from '../../src/index.js';

describe('error catalogue', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  it.each(Object.entries(CATALOGUE))('%s is documented with its code and message', (key, [code, msg]) => {
    const line = doc.split('\n').find((l) => l.includes(`\`${key}\``));
    expect(line, `docs/errors.md lacks ${key}`).toBeDefined();
    expect(line).toContain(`| ${code} |`);
    expect(line).toContain(msg.replace(/\|/g, '\\|').replace(/%s/g, '‹…›'));
  });

  it('ApiError is exported, named and keeps its code', () => {
    const e = new ApiError(RetCode.DATA_ERROR, 'x', { cause: new Error('y') });
    expect(e).toBeInstanceOf(PublicApiError);
    expect(e).toBeInstanceOf(Error);
    expect([e.name, e.code, e.message, (e.cause as Error).message]).toEqual(['ApiError', 102, 'x', 'y']);
  });
});
