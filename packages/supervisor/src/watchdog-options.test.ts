import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
  DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
  DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
  loadConfig,
} from '@hermes/config';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { loopWatchdogOptionsFromConfig } from './watchdog-options.js';

async function gatewayFrom(yaml: string) {
  const home = await tempHome();
  await writeFile(path.join(home.path, 'config.yaml'), yaml);
  return loadConfig({ home: home.path, env: {} }).config.gateway;
}

describe('loopWatchdogOptionsFromConfig', () => {
  it('uses the shipped defaults when config says nothing', async () => {
    const options = loopWatchdogOptionsFromConfig(await gatewayFrom(''), { mode: 'warn' });
    expect(options).toEqual({
      mode: 'warn',
      probeIntervalS: DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
      probeTimeoutS: DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
      maxStrikes: DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
    });
  });

  it('takes configured knobs and falls back to defaults for out-of-range values', async () => {
    const gateway = await gatewayFrom(
      'gateway:\n  loop_watchdog_probe_interval_s: 5\n  loop_watchdog_probe_timeout_s: 9999\n  loop_watchdog_max_strikes: 7\n',
    );
    expect(loopWatchdogOptionsFromConfig(gateway)).toEqual({
      probeIntervalS: 5,
      probeTimeoutS: DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
      maxStrikes: 7,
    });
  });

  it('falls back to defaults for non-finite values and for values below the range', async () => {
    const gateway = await gatewayFrom(
      'loop_watchdog_probe_interval_s: .inf\nloop_watchdog_probe_timeout_s: .nan\nloop_watchdog_max_strikes: 0\n',
    );
    expect(loopWatchdogOptionsFromConfig(gateway)).toEqual({
      probeIntervalS: DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
      probeTimeoutS: DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
      maxStrikes: DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
    });
  });

  it('returns nothing to arm when loop_watchdog is false, top level or under gateway:', async () => {
    expect(
      loopWatchdogOptionsFromConfig(await gatewayFrom('loop_watchdog: false\n')),
    ).toBeUndefined();
    expect(
      loopWatchdogOptionsFromConfig(await gatewayFrom('gateway:\n  loop_watchdog: false\n')),
    ).toBeUndefined();
  });
});
