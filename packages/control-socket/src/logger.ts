/** Where the control socket reports what happened. Messages never contain secrets. */
export interface ControlSocketLogger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string, error?: unknown): void;
}

/** The default: a library stays quiet unless the application passes its logger. */
export const silentLogger: ControlSocketLogger = {
  info() {},
  warn() {},
  debug() {},
};
