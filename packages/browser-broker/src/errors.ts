const MARKER = Symbol.for('@hermes/browser-broker.error');
const CONNECTION_MARKER = Symbol.for('@hermes/browser-broker.connection-error');

export type BrowserControlErrorCode =
  | 'controller_ticket_invalid'
  | 'controller_unavailable'
  | 'controller_cancelled'
  | 'controller_timeout'
  | 'controller_rejected';

/**
 * The one base error of `@hermes/browser-broker`. Every refusal the broker or router raises is one
 * of its five subclasses, each with a stable string `code`.
 */
export class BrowserControlError extends Error {
  readonly code: BrowserControlErrorCode;
  readonly [MARKER] = true;

  constructor(code: BrowserControlErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is BrowserControlError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}

/** A ticket that is unknown, already consumed or expired. */
export class ControllerTicketInvalid extends BrowserControlError {
  constructor(message: string) {
    super('controller_ticket_invalid', message);
  }
}

/** No connected controller with the exact identity and capability (also the router's fail-closed). */
export class ControllerUnavailable extends BrowserControlError {
  constructor(message: string) {
    super('controller_unavailable', message);
  }
}

/** The pending command was cancelled (cancel, detach, hard replacement or reset). */
export class ControllerCancelled extends BrowserControlError {
  constructor(message: string) {
    super('controller_cancelled', message);
  }
}

/** The controller did not complete the command before its deadline. */
export class ControllerTimeout extends BrowserControlError {
  constructor(message: string) {
    super('controller_timeout', message);
  }
}

/** The controller answered with `ok` other than literal `true`, or an artifact reference failed. */
export class ControllerRejected extends BrowserControlError {
  /** The controller's error payload, when the rejection came from the controller. */
  readonly payload: unknown;

  constructor(message: string, payload?: unknown) {
    super('controller_rejected', message);
    this.payload = payload;
  }
}

/**
 * A transport failure (closed socket, failed deferred-cancel flush). Deliberately outside the
 * `BrowserControlError` family: it is not a broker decision but a broken connection, and callers
 * that catch broker refusals should not swallow it.
 */
export class BrowserControllerConnectionError extends Error {
  readonly code = 'controller_connection_failed';
  readonly [CONNECTION_MARKER] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }

  static isInstance(error: unknown): error is BrowserControllerConnectionError {
    return typeof error === 'object' && error !== null && CONNECTION_MARKER in error;
  }
}
