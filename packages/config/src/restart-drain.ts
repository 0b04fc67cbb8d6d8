import { readGatewayKey } from './gateway-keys.js';
import { numberKnob, type Warn } from './knobs.js';

/** Seconds a stopping gateway lets running turns finish before it interrupts them. */
export const DEFAULT_RESTART_DRAIN_TIMEOUT_S = 30;
export const RESTART_DRAIN_TIMEOUT_RANGE = { min: 0, max: 86_400 } as const;

/**
 * `restart_drain_timeout` (top level, else under `gateway:`; see `readGatewayKey`): how long a
 * gateway that is stopping or restarting lets running turns finish. The gateway drains with it
 * and `hermes gateway stop|restart` sizes its wait from it, so both read it here. A value that
 * is not a number from 0 to 86 400 falls back to `DEFAULT_RESTART_DRAIN_TIMEOUT_S` (with a warning).
 */
export function resolveRestartDrainTimeout(
  raw: Record<string, unknown>,
  warn: Warn = () => {},
): number {
  const key = Object.hasOwn(raw, 'restart_drain_timeout')
    ? 'restart_drain_timeout'
    : 'gateway.restart_drain_timeout';
  return numberKnob(readGatewayKey(raw, 'restart_drain_timeout'), DEFAULT_RESTART_DRAIN_TIMEOUT_S, {
    key,
    range: RESTART_DRAIN_TIMEOUT_RANGE,
    warn,
  });
}
