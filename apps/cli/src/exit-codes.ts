/**
 * Exit codes scripts can rely on (docs/cli.md lists them). One source: every command and test
 * imports these.
 */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** It could not be done: not found, refused, unreachable, failed, or a check failed. */
  failure: 1,
  /** The command line is wrong: unknown command or option, missing or invalid argument. */
  usage: 2,
  /** A deadline passed: a peer or the gateway did not answer in time. */
  timeout: 3,
  /** Interrupted with Ctrl-C (128 + SIGINT). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
