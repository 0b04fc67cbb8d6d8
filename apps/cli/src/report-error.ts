import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import type { Output } from './output/output.js';

/** A failure as the user sees it (and as `--json` prints it). */
export interface ReportedError {
  readonly code: string;
  readonly message: string;
  readonly hint?: string;
  readonly exitCode: number;
  /** False for a bug: the stack is then worth reporting. */
  readonly expected: boolean;
}

const HINTS: Readonly<Record<string, string>> = {
  config_parse_error: 'Fix the file, or open it with: hermes config edit',
  config_invalid: 'Check the file, or open it with: hermes config edit',
  database_corrupt: 'Move state.db aside (the error names it) and run: hermes doctor',
  database_locked: 'Another Hermes process is writing to state.db; try again in a moment',
  database_replaced: 'state.db was replaced while open; run the command again',
};

/** Package error codes that mean the command line itself was wrong (a malformed name or key). */
const USAGE_CODES: ReadonlySet<string> = new Set([
  'invalid_profile_name',
  'invalid_config_key',
  'invalid_env_name',
  'invalid_env_value',
]);

/** The package an error comes from, when it is one of ours (`@hermes/<package>.error` marker). */
function hermesErrorPackage(error: object): string | undefined {
  for (const symbol of Object.getOwnPropertySymbols(error)) {
    const match = /^@hermes\/([a-z-]+)\.(?:error|refusal)$/.exec(symbol.description ?? '');
    if (match) return match[1];
  }
  return undefined;
}

export function describeError(error: unknown): ReportedError {
  if (CliError.isInstance(error)) {
    return {
      code: error.code,
      message: error.message,
      ...(error.hint ? { hint: error.hint } : {}),
      exitCode: error.exitCode,
      expected: true,
    };
  }
  if (typeof error === 'object' && error !== null && hermesErrorPackage(error)) {
    const code = String((error as { code?: unknown }).code ?? 'error');
    const hint = HINTS[code];
    return {
      code,
      message: (error as Error).message,
      ...(hint ? { hint } : {}),
      exitCode: USAGE_CODES.has(code) ? EXIT.usage : EXIT.failure,
      expected: true,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: 'internal_error',
    message: `unexpected error: ${message}`,
    hint: 'Run again with --debug to see where it happened, and report it if it persists',
    exitCode: EXIT.failure,
    expected: false,
  };
}

/** Prints a failure (stderr; also a JSON `error` object on stdout under `--json`). */
export function reportError(error: unknown, options: { output: Output; debug: boolean }): number {
  const reported = describeError(error);
  const { output } = options;
  const styles = output.errorStyles;
  output.note(`${styles.red('hermes:')} ${reported.message}`);
  if (reported.hint) output.note(`  ${styles.dim(reported.hint)}`);
  if (options.debug && error instanceof Error && error.stack) output.note(error.stack);
  if (output.json) {
    output.printJson({
      error: {
        code: reported.code,
        message: reported.message,
        ...(reported.hint ? { hint: reported.hint } : {}),
      },
    });
  }
  return reported.exitCode;
}
