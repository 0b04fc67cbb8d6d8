import * as v from 'valibot';
import { ControlSocketError } from './errors.js';
import type { ControlRequest } from './wire-schema.js';
import { VerbNameSchema } from './wire-schema.js';

/** What the server tells a handler besides the request. */
export interface VerbHandlerContext {
  /**
   * Aborted when the handler's deadline passes (the client has then been answered with a timeout
   * error) or its connection is torn down first (the server closing): stop work nobody will see.
   * A client that half-closes after its line is still waiting for the reply, so that does not
   * abort it.
   */
  readonly signal: AbortSignal;
}

/**
 * Answers one verb. It receives the validated request (read `payload` from it) and returns a
 * JSON-serialisable result. It must not block the event loop: use async I/O. It has a deadline
 * (the server's `handlerTimeoutMs`, default 10 s); after it the client is told so and the
 * connection closes, whatever the handler does.
 */
export type VerbHandler = (
  request: ControlRequest,
  /** Always given by the server; optional so a wrapper can call a handler directly. */
  context?: VerbHandlerContext,
) => unknown | Promise<unknown>;

/** The verbs a server answers. The gateway registers its own verbs next to the built-ins. */
export class VerbRegistry {
  readonly #handlers = new Map<string, VerbHandler>();

  constructor(handlers: Readonly<Record<string, VerbHandler>> = {}) {
    for (const [verb, handler] of Object.entries(handlers)) this.set(verb, handler);
  }

  /** Adds `verb`; throws `verb_exists` if it is already registered (use `set` to replace). */
  register(verb: string, handler: VerbHandler): this {
    if (this.#handlers.has(verb)) {
      throw new ControlSocketError({
        code: 'verb_exists',
        message: `control verb "${verb}" is already registered`,
      });
    }
    return this.set(verb, handler);
  }

  /** Adds or replaces the handler for `verb`. */
  set(verb: string, handler: VerbHandler): this {
    if (!v.is(VerbNameSchema, verb)) {
      throw new ControlSocketError({
        code: 'invalid_verb_name',
        message: `control verb names are 1-128 character strings, got ${JSON.stringify(verb)}`,
      });
    }
    this.#handlers.set(verb, handler);
    return this;
  }

  /** Removes `verb`; true when it was registered. */
  unregister(verb: string): boolean {
    return this.#handlers.delete(verb);
  }

  get(verb: string): VerbHandler | undefined {
    return this.#handlers.get(verb);
  }

  has(verb: string): boolean {
    return this.#handlers.has(verb);
  }

  /** Registered verb names, sorted (the `supported_verbs` of an unknown-verb reply). */
  verbs(): string[] {
    return [...this.#handlers.keys()].sort();
  }
}
