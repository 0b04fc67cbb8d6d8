const MARKER = Symbol.for('@hermes/commands.error');

export type CommandsErrorCode = 'unknown_command_surface';

/** The one base error of `@hermes/commands`, with a stable string `code`. */
export class CommandsError extends Error {
  readonly code: CommandsErrorCode;
  readonly [MARKER] = true;

  constructor(options: { code: CommandsErrorCode; message: string; cause?: unknown }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is CommandsError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}
