import type { Api, OpName } from '../api/index.js';

/**
 * How resource objects reach the operation layer: in-process (`LocalTransport`), or over HTTP
 * (`HttpTransport` in ./http.js). Both resolve to the same results and reject with the same
 * `ApiError`s; a streamed answer is an AsyncIterable either way.
 */
export interface Transport {
  call<T = unknown>(op: OpName, params?: Record<string, unknown>): Promise<T>;
  close(): Promise<void>;
}

export class LocalTransport implements Transport {
  constructor(readonly api: Api) {}
  call<T>(op: OpName, params: Record<string, unknown> = {}): Promise<T> {
    return this.api.call(op, params) as Promise<T>;
  }
  close(): Promise<void> {
    return this.api.close();
  }
}
