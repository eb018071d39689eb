/**
 * The one error a chat model throws. `kind` says what went wrong, so a caller can decide without
 * parsing the message:
 *
 * | kind       | cause                                                                | `status`        |
 * |------------|----------------------------------------------------------------------|-----------------|
 * | `http`     | the server answered with an error status, or reported one mid-stream | the HTTP status |
 * | `timeout`  | no connection within the connect timeout, or no data within the read timeout | —       |
 * | `network`  | the server could not be reached or dropped the connection            | —               |
 * | `protocol` | the server answered with something that is not the OpenAI protocol   | —               |
 * | `aborted`  | the caller's `signal` fired, or the model was closed                 | —               |
 *
 * Messages start with `Chat model <id>: ` and name the URL, e.g.
 * `Chat model qwen2.5@Ollama: HTTP 401 from http://127.0.0.1:11434/v1/chat/completions: invalid api key`.
 */

export type ChatModelErrorKind = 'http' | 'timeout' | 'network' | 'protocol' | 'aborted';

export interface ChatModelErrorInit {
  kind: ChatModelErrorKind;
  /** The model's id, `name@factory`. */
  model: string;
  /** What happened, without the `Chat model <id>: ` prefix (added here). */
  message: string;
  status?: number;
  /** The URL that was requested. */
  url?: string;
  cause?: unknown;
}

export class ChatModelError extends Error {
  override name = 'ChatModelError';
  readonly kind: ChatModelErrorKind;
  /** HTTP status (`kind: 'http'` only; absent for an error the server reported inside a stream without one). */
  readonly status?: number;
  /** The model's id, `name@factory`. */
  readonly model: string;
  /** The URL that was requested, when there was one. */
  readonly url?: string;

  constructor(init: ChatModelErrorInit) {
    super(`Chat model ${init.model}: ${init.message}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.model = init.model;
    if (init.status !== undefined) this.status = init.status;
    if (init.url !== undefined) this.url = init.url;
  }
}
