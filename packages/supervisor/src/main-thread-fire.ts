/**
 * The main-thread half of the watchdogs' exit path. A worker's inspector `Runtime.evaluate` looks
 * a fire function up here by id and runs it as a V8 interrupt, on top of whatever code is hogging
 * the loop — which is why `captureMainStack` sees the wedged frames.
 */
export type FireFunction<TPayload> = (payload: TPayload) => void;

export function fireRegistry<TPayload = undefined>(
  key: string,
): Map<number, FireFunction<TPayload>> {
  const symbol = Symbol.for(key);
  const holder = globalThis as unknown as Record<
    symbol,
    Map<number, FireFunction<TPayload>> | undefined
  >;
  let registry = holder[symbol];
  if (registry === undefined) {
    registry = new Map();
    holder[symbol] = registry;
  }
  return registry;
}

/**
 * The caller's stack with a generous frame limit, minus the watchdog's own frames, so the first
 * line is the wedged code.
 */
export function captureMainStack(): string {
  const previousLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 100;
  const stack = new Error('watchdog').stack ?? '';
  Error.stackTraceLimit = previousLimit;
  const lines = stack.split('\n').slice(1);
  // The evaluation's own frame is `<anonymous>`; everything below it is the interrupted code.
  const evaluationFrame = lines.findIndex((line) => line.includes('<anonymous>'));
  const wedged = evaluationFrame === -1 ? lines : lines.slice(evaluationFrame + 1);
  return wedged.map((line) => line.trim()).join('\n');
}
