const MARKER = Symbol.for('@hermes/config.error');

export type ConfigErrorCode =
  | 'invalid_profile_name'
  | 'reserved_profile_name'
  | 'profile_exists'
  | 'profile_not_found'
  | 'profile_not_deletable'
  | 'config_parse_error'
  | 'config_invalid'
  | 'invalid_config_key'
  | 'config_write_failed'
  | 'invalid_env_name'
  | 'invalid_env_value';

export interface HermesConfigErrorOptions {
  code: ConfigErrorCode;
  message: string;
  cause?: unknown;
}

/**
 * The one base error of `@hermes/config`. Every error carries a stable string `code`; messages are
 * written for the person who made the mistake (they name the file, key or profile involved) and
 * never contain secret values.
 */
export class HermesConfigError extends Error {
  readonly code: ConfigErrorCode;
  readonly [MARKER] = true;

  constructor(options: HermesConfigErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
  }

  /** Works across duplicated installs of this package, unlike `instanceof`. */
  static isInstance(error: unknown): error is HermesConfigError {
    return typeof error === 'object' && error !== null && MARKER in error;
  }
}

/** A YAML syntax error, located to the file, line and column (both 1-based). */
export class ConfigParseError extends HermesConfigError {
  readonly file: string;
  readonly line: number;
  readonly column: number;

  constructor(options: { file: string; line: number; column: number; reason: string }) {
    super({
      code: 'config_parse_error',
      message: `${options.file}:${options.line}:${options.column}: invalid YAML: ${options.reason}`,
    });
    this.file = options.file;
    this.line = options.line;
    this.column = options.column;
  }
}
