/** What the PostgreSQL store makes of a failure: retry, give up, or say the outcome is unknown. */
import { describe, expect, it } from 'vitest';
import { isConnectionError, isRetryableConflict, isStatementTimeout, isUniqueViolation, nameClash } from '../../../src/store/postgres/index.js';

const pgErr = (code: string, message = 'x', constraint?: string) => Object.assign(new Error(message), { code, constraint });

describe('PostgreSQL failure classes', () => {
  it('a connection gone: socket errors, the server ending the session, a standby after failover, pg\'s own messages', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', '08006', '08003', '57P01', '57P02', '57P03', '57P05', '25P03', '53300', '25006']) {
      expect(isConnectionError(pgErr(code)), code).toBe(true);
    }
    for (const message of ['Connection terminated unexpectedly', 'Connection terminated', 'timeout exceeded when trying to connect', 'Client has encountered a connection error and is not queryable']) {
      expect(isConnectionError(new Error(message)), message).toBe(true);
    }
  });

  it('a statement that failed is not a connection gone, even when its message sounds like one', () => {
    for (const code of ['23505', '42P01', '22P02', '57014', '40001', '40P01', '3D000', '28P01']) expect(isConnectionError(pgErr(code, 'Connection terminated')), code).toBe(false);
    expect(isConnectionError(new Error('syntax error'))).toBe(false);
    expect(isConnectionError(null)).toBe(false);
    expect(isConnectionError('ECONNRESET')).toBe(false);
  });

  it('conflicts, timeouts and unique violations', () => {
    expect(isRetryableConflict(pgErr('40001'))).toBe(true);
    expect(isRetryableConflict(pgErr('40P01'))).toBe(true);
    expect(isRetryableConflict(pgErr('23505'))).toBe(false);
    expect(isStatementTimeout(pgErr('57014'))).toBe(true);
    expect(isUniqueViolation(pgErr('23505', 'dup', 'chat_name_unique'), 'chat_name_unique')).toBe(true);
    expect(isUniqueViolation(pgErr('23505', 'dup', 'chat_pkey'), 'chat_name_unique')).toBe(false);
    expect(nameClash(pgErr('23505', 'dup', 'dataset_name_unique'))).toBe('dataset_name_unique');
    expect(nameClash(pgErr('23505', 'dup', 'toString'))).toBeUndefined();
    expect(nameClash(pgErr('23503', 'fk', 'dataset_name_unique'))).toBeUndefined();
  });
});
