import { readFile, stat } from 'node:fs/promises';
import net from 'node:net';
import * as v from 'valibot';
import {
  DEFAULT_LOOP_LIVENESS_STALE_AFTER_S,
  DEFAULT_WITNESS_TICK_GAP_S,
  DEFAULT_WITNESS_TICK_STRIKES,
  DEFAULT_WITNESS_TICK_TIMEOUT_S,
  LOOP_TICK_BYTE,
} from './constants.js';
import { heartbeatFilePath, loopTickSocketPath } from './heartbeat.js';

export type LivenessVerdict = 'alive' | 'wedged' | 'unknown';

export interface ProbeLivenessOptions {
  /**
   * The PID the caller believes is the gateway (from the PID file); a heartbeat from another PID
   * proves nothing. Omitted ⇒ the heartbeat's own PID is probed.
   */
  readonly pid?: number;
  /** Heartbeat age (seconds) beyond which it is stale (default 90). */
  readonly staleAfterS?: number;
  /** Seconds to wait for the witness byte (default 1). */
  readonly tickTimeoutS?: number;
  /** Witness checks that must all be silent before `wedged` (default 3). */
  readonly tickStrikes?: number;
  /** Seconds between witness checks (default 0.2). */
  readonly tickGapS?: number;
  /** Wall clock in ms, for the heartbeat's age (default `Date.now`). */
  readonly now?: () => number;
}

/** The heartbeat file as read from disk: only the fields the probe relies on are checked. */
const heartbeatSchema = v.looseObject({
  pid: v.pipe(v.number(), v.integer()),
  loop_tick_socket: v.optional(v.boolean()),
  loop_tick_tcp_port: v.optional(v.nullable(v.number())),
});

/** `true` = answered `1`; `false` = silent or wrong answer; `undefined` = no such socket node. */
function checkWitness(target: string | number, timeoutMs: number): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    const socket =
      typeof target === 'string' ? net.connect(target) : net.connect(target, '127.0.0.1');
    let settled = false;
    const finish = (result: boolean | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    timer.unref();
    socket.once('data', (chunk: Buffer) => finish(chunk.toString('utf8', 0, 1) === LOOP_TICK_BYTE));
    socket.once('end', () => finish(false));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      // A vanished node is not evidence either way; a refused connection on a live node is silence.
      finish(typeof target === 'string' && error.code === 'ENOENT' ? undefined : false);
    });
  });
}

/**
 * Tells an external caller whether a gateway's event loop is running: `alive`, `wedged` or
 * `unknown`. Only `wedged` justifies killing the gateway, and it needs both witnesses against the
 * loop: a stale heartbeat **and** every witness check silent.
 */
export async function probeLiveness(
  home: string,
  options: ProbeLivenessOptions = {},
): Promise<LivenessVerdict> {
  const staleAfterS = options.staleAfterS ?? DEFAULT_LOOP_LIVENESS_STALE_AFTER_S;
  const timeoutMs = (options.tickTimeoutS ?? DEFAULT_WITNESS_TICK_TIMEOUT_S) * 1000;
  const strikes = Math.max(1, options.tickStrikes ?? DEFAULT_WITNESS_TICK_STRIKES);
  const gapMs = (options.tickGapS ?? DEFAULT_WITNESS_TICK_GAP_S) * 1000;
  const now = options.now ?? Date.now;

  const file = heartbeatFilePath(home);
  let ageS: number;
  let heartbeat: v.InferOutput<typeof heartbeatSchema>;
  try {
    const [info, text] = await Promise.all([stat(file), readFile(file, 'utf8')]);
    const parsed = v.safeParse(heartbeatSchema, JSON.parse(text));
    if (!parsed.success) return 'unknown';
    heartbeat = parsed.output;
    ageS = (now() - info.mtimeMs) / 1000;
  } catch {
    return 'unknown';
  }
  const pid = options.pid ?? heartbeat.pid;
  if (heartbeat.pid <= 0 || heartbeat.pid !== pid) return 'unknown';

  const port = heartbeat.loop_tick_tcp_port;
  const useTcp = typeof port === 'number' && port > 0;
  const target: string | number = useTcp ? port : loopTickSocketPath(home, pid);
  const armed: boolean | 'absent' = useTcp
    ? true
    : heartbeat.loop_tick_socket === undefined
      ? 'absent'
      : heartbeat.loop_tick_socket;

  const first = await checkWitness(target, timeoutMs);
  if (first === true) return 'alive';
  if (ageS <= staleAfterS) {
    // A fresh heartbeat with a silent witness: the off-loop write may have landed after the freeze.
    return first === false ? 'unknown' : 'alive';
  }
  // A legacy writer wrote on the loop itself, so its stale heartbeat alone is proof.
  if (armed === 'absent') return 'wedged';
  if (armed !== true) return 'unknown';
  if (first !== false) return 'unknown';
  for (let check = 1; check < strikes; check += 1) {
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    const again = await checkWitness(target, timeoutMs);
    if (again === true) return 'alive';
    if (again === undefined) return 'unknown';
  }
  return 'wedged';
}
