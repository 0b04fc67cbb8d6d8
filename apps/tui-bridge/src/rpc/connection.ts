import * as v from 'valibot';
import {
  EVENT_METHOD,
  type EventEnvelope,
  RequestIdSchema,
  RequestSchema,
} from '../contract/envelope.js';
import { RPC_ERROR_CODES, RPC_ERROR_MESSAGES, RpcError } from '../contract/error-codes.js';
import { isMethodName, METHODS, type MethodName } from '../contract/methods.js';

export type Transport = 'stdio' | 'websocket';

/** What a method handler sees of the connection that called it. */
export interface CallContext {
  readonly connection: Connection;
  /** Runs after the reply is written (events that must follow the reply). */
  afterReply(action: () => void): void;
}

export type MethodHandler = (params: unknown, context: CallContext) => Promise<unknown>;
export type MethodTable = { readonly [M in MethodName]: MethodHandler };

let nextConnectionId = 1;

/** An issue's message quotes the value it refused: a long value is cut to this many characters. */
const ISSUE_MESSAGE_MAX_CHARS = 200;

function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => {
      const path = v.getDotPath(issue);
      const message =
        issue.message.length > ISSUE_MESSAGE_MAX_CHARS
          ? `${issue.message.slice(0, ISSUE_MESSAGE_MAX_CHARS)}…`
          : issue.message;
      return path ? `${path}: ${message}` : message;
    })
    .join('; ');
}

/**
 * One front end's conversation with the bridge: JSON-RPC 2.0 requests in, replies and events out,
 * over any transport that moves whole messages (`send`). A bad message gets an error reply and
 * changes nothing; the connection keeps serving.
 */
export class Connection {
  readonly id = nextConnectionId++;
  readonly transport: Transport;
  readonly #send: (text: string) => void;
  readonly #methods: MethodTable;
  readonly #onClose: (connection: Connection) => void;
  /** Messages received and not yet answered. */
  readonly #inFlight = new Set<Promise<void>>();
  #closed = false;

  constructor(options: {
    transport: Transport;
    send: (text: string) => void;
    methods: MethodTable;
    onClose: (connection: Connection) => void;
  }) {
    this.transport = options.transport;
    this.#send = options.send;
    this.#methods = options.methods;
    this.#onClose = options.onClose;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends an event envelope (dropped once the connection is closed). */
  sendEvent(envelope: EventEnvelope | string): void {
    if (this.#closed) return;
    this.#send(typeof envelope === 'string' ? envelope : JSON.stringify(envelope));
  }

  /** The transport reports a line it could not read whole (over the size limit). */
  rejectOversized(limit: number): void {
    this.#reply(null, undefined, {
      code: RPC_ERROR_CODES.parseError,
      message: RPC_ERROR_MESSAGES.lineTooLong(limit),
    });
  }

  /** Handles one incoming message; never throws. */
  receive(text: string): Promise<void> {
    const handling = this.#receive(text);
    this.#inFlight.add(handling);
    void handling.then(() => this.#inFlight.delete(handling));
    return handling;
  }

  /**
   * Resolves true once every message received so far is answered (the front end closed its end:
   * what it asked before still gets its reply), or false after `timeoutMs`.
   */
  async settled(timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    while (this.#inFlight.size > 0) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(this.#inFlight),
        new Promise((resolve) => {
          timer = setTimeout(resolve, remaining);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    }
    return true;
  }

  async #receive(text: string): Promise<void> {
    if (this.#closed) return;
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.#reply(null, undefined, {
        code: RPC_ERROR_CODES.parseError,
        message: RPC_ERROR_MESSAGES.parseError,
      });
      return;
    }
    if (Array.isArray(value)) {
      // Batches are part of JSON-RPC 2.0: answer each member, in order, as one array.
      if (value.length === 0) {
        this.#reply(null, undefined, {
          code: RPC_ERROR_CODES.invalidRequest,
          message: RPC_ERROR_MESSAGES.invalidRequest,
        });
        return;
      }
      // Steps that must follow a member's reply (a prompt's held events, a resume's replay) run
      // once the whole batch reply is written.
      const afterBatch: (() => void)[] = [];
      const replies = await Promise.all(value.map((member) => this.#handle(member, afterBatch)));
      const answered = replies.filter(
        (reply): reply is Record<string, unknown> => reply !== undefined,
      );
      if (answered.length > 0 && !this.#closed) this.#send(JSON.stringify(answered));
      for (const action of afterBatch) action();
      return;
    }
    const afterReply: (() => void)[] = [];
    const reply = await this.#handle(value, afterReply);
    if (reply !== undefined && !this.#closed) this.#send(JSON.stringify(reply));
    for (const action of afterReply) action();
  }

  async #handle(
    value: unknown,
    afterReply: (() => void)[],
  ): Promise<Record<string, unknown> | undefined> {
    const request = v.safeParse(RequestSchema, value);
    if (!request.success) {
      const id =
        typeof value === 'object' && value !== null && 'id' in value
          ? (value as { id: unknown }).id
          : null;
      const usableId = v.is(RequestIdSchema, id) ? id : null;
      return this.#errorReply(usableId, {
        code: RPC_ERROR_CODES.invalidRequest,
        message: `${RPC_ERROR_MESSAGES.invalidRequest} (${describeIssues(request.issues)})`,
      });
    }
    const { id, method, params } = request.output;
    const isNotification = id === undefined;
    const respond = (payload: {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    }) =>
      isNotification
        ? undefined
        : payload.error
          ? this.#errorReply(id, payload.error)
          : { jsonrpc: '2.0', id, result: payload.result };

    if (method === EVENT_METHOD || !isMethodName(method)) {
      return respond({
        error: {
          code: RPC_ERROR_CODES.methodNotFound,
          message: RPC_ERROR_MESSAGES.methodNotFound(method),
        },
      });
    }
    if (Array.isArray(params)) {
      return respond({
        error: {
          code: RPC_ERROR_CODES.invalidParams,
          message: 'Invalid params: pass params by name (an object)',
        },
      });
    }
    const parsed = v.safeParse(METHODS[method].params, params ?? {});
    if (!parsed.success) {
      return respond({
        error: {
          code: RPC_ERROR_CODES.invalidParams,
          message: `Invalid params: ${describeIssues(parsed.issues)}`,
        },
      });
    }
    try {
      const result = await this.#methods[method](parsed.output, {
        connection: this,
        afterReply: (action) => afterReply.push(action),
      });
      return respond({ result });
    } catch (error) {
      if (RpcError.isInstance(error)) {
        return respond({
          error: {
            code: error.code,
            message: error.message,
            ...(error.data === undefined ? {} : { data: error.data }),
          },
        });
      }
      const message = error instanceof Error ? error.message : String(error);
      return respond({
        error: { code: RPC_ERROR_CODES.internalError, message: `Internal error: ${message}` },
      });
    }
  }

  #errorReply(
    id: string | number | null,
    error: { code: number; message: string; data?: unknown },
  ) {
    return { jsonrpc: '2.0', id, error };
  }

  #reply(
    id: string | number | null,
    _result: unknown,
    error: { code: number; message: string },
  ): void {
    if (this.#closed) return;
    this.#send(JSON.stringify(this.#errorReply(id, error)));
  }

  /** The transport went away: turns keep running, events stop coming here. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose(this);
  }
}
