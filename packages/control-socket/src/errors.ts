const MARKER = Symbol.for('@hermes/control-socket.error');

export type ControlSocketErrorCode =
  | 'socket_in_use'
  | 'not_main_thread'
  | 'bind_failed'
  | 'verb_exists'
  | 'invalid_verb_name';

export interface ControlSocketErrorOptions {
  code: ControlSocketErrorCode;
  message: string;
  cause?: unknown;
}

/**
 * The one base error of `@hermes/control-socket`. It never crosses the wire: replies carry plain
 * `{ ok: false, error }` bodies built from the strings in `constants.ts`.
 */
export class ControlSocketError extends Error {
  readonly code: ControlSocketErrorCode;
  readonly [MARKER] = true;

  constructor(options: ControlSocketErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is ControlSocketError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}
