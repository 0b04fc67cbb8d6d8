import type { NumberRange } from './coerce.js';
import { gatewaySectionSchema } from './config-schema.js';
import type { BrowserConfig, GatewayConfig } from './config-types.js';
import {
  DEFAULT_LOOP_WATCHDOG_ENABLED,
  DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
  DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
  DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
  DEFAULT_STARTUP_RESTORE_DRAIN_TIMEOUT_S,
  LOOP_WATCHDOG_INTERVAL_RANGE,
  LOOP_WATCHDOG_MAX_STRIKES_RANGE,
  LOOP_WATCHDOG_TIMEOUT_RANGE,
} from './defaults.js';
import { readEnvBoolean, readGatewayKey } from './gateway-keys.js';
import { booleanKnob, integerKnob, numberKnob, type Warn } from './knobs.js';
import { isRecord, parseLenient } from './lenient-section.js';

/**
 * Resolves the gateway knobs from the whole document (they may sit at the top level or under
 * `gateway:`; see `readGatewayKey`).
 */
export function resolveGatewayConfig(
  raw: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
  warn: Warn = () => {},
): GatewayConfig {
  const nested = parseLenient(gatewaySectionSchema, raw.gateway, 'gateway', warn);
  const multiplexEnv = readEnvBoolean(env, 'GATEWAY_MULTIPLEX_PROFILES');
  if (multiplexEnv.warning) warn(multiplexEnv.warning);
  // Name the key where the user wrote it: the top level wins by presence (see readGatewayKey).
  const where = (key: string) => (Object.hasOwn(raw, key) ? key : `gateway.${key}`);
  const gatewayNumber = (key: string, defaultValue: number, range: NumberRange) =>
    numberKnob(readGatewayKey(raw, key), defaultValue, { key: where(key), range, warn });
  const agent = isRecord(raw.agent) ? raw.agent : {};
  const restoreEnv = env.HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT?.trim();
  return {
    loopWatchdog: booleanKnob(readGatewayKey(raw, 'loop_watchdog'), DEFAULT_LOOP_WATCHDOG_ENABLED, {
      key: where('loop_watchdog'),
      warn,
    }),
    loopWatchdogProbeIntervalS: gatewayNumber(
      'loop_watchdog_probe_interval_s',
      DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
      LOOP_WATCHDOG_INTERVAL_RANGE,
    ),
    loopWatchdogProbeTimeoutS: gatewayNumber(
      'loop_watchdog_probe_timeout_s',
      DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
      LOOP_WATCHDOG_TIMEOUT_RANGE,
    ),
    loopWatchdogMaxStrikes: integerKnob(
      readGatewayKey(raw, 'loop_watchdog_max_strikes'),
      DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
      { key: where('loop_watchdog_max_strikes'), range: LOOP_WATCHDOG_MAX_STRIKES_RANGE, warn },
    ),
    multiplexProfiles:
      multiplexEnv.value ??
      booleanKnob(readGatewayKey(raw, 'multiplex_profiles'), false, {
        key: where('multiplex_profiles'),
        warn,
      }),
    multiplexProfileAllowlist: nested.multiplex_profile_allowlist ?? undefined,
    // No range: a value ≤ 0 is meaningful (wait for all boot work).
    startupRestoreDrainTimeoutS: restoreEnv
      ? numberKnob(restoreEnv, DEFAULT_STARTUP_RESTORE_DRAIN_TIMEOUT_S, {
          key: 'HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT',
          warn,
        })
      : numberKnob(
          agent.gateway_startup_restore_drain_timeout,
          DEFAULT_STARTUP_RESTORE_DRAIN_TIMEOUT_S,
          {
            key: 'agent.gateway_startup_restore_drain_timeout',
            warn,
          },
        ),
  };
}

/**
 * The browser extension-control flags. A flag is on only when the value is literally `true`:
 * `"true"`, `1`, `yes`, a list, a missing or non-mapping section all read as off.
 */
export function resolveBrowserConfig(raw: Record<string, unknown>): BrowserConfig {
  const browser = isRecord(raw.browser) ? raw.browser : {};
  const control = isRecord(browser.extension_control) ? browser.extension_control : {};
  return {
    extensionControl: {
      enabled: control.enabled === true,
      developerMode: control.developer_mode === true,
    },
  };
}
