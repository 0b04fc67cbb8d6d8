const MARKER = Symbol.for('@hermes/supervisor.error');

export type SupervisorErrorCode =
  | 'invalid_watchdog_options'
  | 'invalid_heartbeat_options'
  | 'invalid_systemd_unit'
  | 'systemctl_failed';

export interface SupervisorErrorOptions {
  code: SupervisorErrorCode;
  message: string;
  cause?: unknown;
}

/**
 * The one base error of `@hermes/supervisor`. Every error carries a stable string `code`; it is a
 * local error and never crosses the wire as-is.
 */
export class SupervisorError extends Error {
  readonly code: SupervisorErrorCode;
  readonly [MARKER] = true;

  constructor(options: SupervisorErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is SupervisorError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}
