import type { Api, OpName } from '../api/index.js';

/** How resource objects reach the operation layer: in-process, or (later) over HTTP. */
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
