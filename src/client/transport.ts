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

/**
 * In-process, on an engine that opens asynchronously (a PostgreSQL store): every call waits for
 * the open, and rejects with its ApiError (a database that does not exist, or cannot be reached)
 * when it failed. `api()` is read at each call, so work chained onto the open (a model
 * registered meanwhile) happens before the call.
 */
export class OpeningTransport implements Transport {
  constructor(private readonly api: () => Promise<Api>) {}
  async call<T>(op: OpName, params: Record<string, unknown> = {}): Promise<T> {
    return (await this.api()).call(op, params) as Promise<T>;
  }
  async close(): Promise<void> {
    let api: Api;
    try {
      api = await this.api();
    } catch {
      return; // never opened: nothing to release
    }
    await api.close();
  }
}
