import { EXIT } from './exit-codes.js';

const MARKER = Symbol.for('@hermes/cli.error');

export interface CliErrorOptions {
  /** A stable, machine-readable code (`session_not_found`, `gateway_not_running`, …). */
  readonly code: string;
  readonly message: string;
  /** What to do next, shown under the message. */
  readonly hint?: string | undefined;
  readonly exitCode?: number;
  readonly cause?: unknown;
}

/**
 * An expected failure of a command: shown as `hermes: <message>` plus its hint, never with a stack
 * trace (`--debug` adds one), and ends the process with `exitCode` (default 1).
 */
export class CliError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly exitCode: number;
  readonly [MARKER] = true;

  constructor(options: CliErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? EXIT.failure;
  }

  static isInstance(error: unknown): error is CliError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}

/** A mistake on the command line (exit 2). */
export function usageError(message: string, hint?: string): CliError {
  return new CliError({ code: 'usage', message, hint, exitCode: EXIT.usage });
}
