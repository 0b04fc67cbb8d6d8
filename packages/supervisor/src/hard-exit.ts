/**
 * Ends the process with `code` without running `exit` listeners (the reference's `os._exit`):
 * cleanup code could itself be what is wedged. Uses Node's `process.reallyExit` where present and
 * falls back to `process.exit`.
 */
export function hardExit(code: number): never {
  const withRawExit = process as NodeJS.Process & { reallyExit?: (code: number) => never };
  if (typeof withRawExit.reallyExit === 'function') withRawExit.reallyExit(code);
  process.exit(code);
}
