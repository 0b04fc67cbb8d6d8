import type { GatewayConfig } from '@hermes/config';
import type { LoopWatchdogOptions } from './loop-watchdog.js';

/**
 * Builds loop watchdog options from the resolved gateway config (`@hermes/config` has already
 * applied the reference clamps). Returns `undefined` when `loop_watchdog` is false: do not arm.
 */
export function loopWatchdogOptionsFromConfig(
  gateway: Pick<
    GatewayConfig,
    | 'loopWatchdog'
    | 'loopWatchdogProbeIntervalS'
    | 'loopWatchdogProbeTimeoutS'
    | 'loopWatchdogMaxStrikes'
  >,
  extra: Omit<LoopWatchdogOptions, 'probeIntervalS' | 'probeTimeoutS' | 'maxStrikes'> = {},
): LoopWatchdogOptions | undefined {
  if (!gateway.loopWatchdog) return undefined;
  return {
    ...extra,
    probeIntervalS: gateway.loopWatchdogProbeIntervalS,
    probeTimeoutS: gateway.loopWatchdogProbeTimeoutS,
    maxStrikes: gateway.loopWatchdogMaxStrikes,
  };
}
