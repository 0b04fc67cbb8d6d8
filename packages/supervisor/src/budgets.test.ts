import { describe, expect, it } from 'vitest';
import {
  parseSystemdDurationToMicroseconds,
  resolveCronDrainBudget,
  resolveRestartExitWaitBudget,
  resolveShutdownWatchdogDelay,
  resolveSystemdTimeoutStopSec,
} from './budgets.js';

describe('budgets', () => {
  it('fires the shutdown watchdog at drain + 60 s, counting junk or negative drains as 0', () => {
    expect(resolveShutdownWatchdogDelay(30)).toBe(90);
    expect(resolveShutdownWatchdogDelay(-5)).toBe(60);
    expect(resolveShutdownWatchdogDelay('soon')).toBe(60);
    expect(resolveShutdownWatchdogDelay(Number.NaN)).toBe(60);
  });

  it('waits drain + after-turn + 15 s for a restarting gateway to exit', () => {
    expect(resolveRestartExitWaitBudget({ drainS: 60, afterTurnS: 30 })).toBe(105);
    expect(resolveRestartExitWaitBudget({ drainS: 0, afterTurnS: 0 })).toBe(15);
  });

  it('sizes TimeoutStopSec to outlast the shutdown watchdog', () => {
    expect(resolveSystemdTimeoutStopSec({ drainS: 0 })).toBe(70);
    expect(resolveSystemdTimeoutStopSec({ drainS: 60 })).toBe(130);
    expect(resolveSystemdTimeoutStopSec({ drainS: 10, cronDrainS: 300 })).toBe(340);
  });

  it('caps the cron drain below the shutdown watchdog', () => {
    expect(
      resolveCronDrainBudget({ drainS: 30, cronFloorS: 0, watchdogDelayS: 90, elapsedS: 0 }),
    ).toBe(30);
    expect(
      resolveCronDrainBudget({ drainS: 30, cronFloorS: 600, watchdogDelayS: 90, elapsedS: 5 }),
    ).toBe(75);
    expect(
      resolveCronDrainBudget({ drainS: 30, cronFloorS: 40, watchdogDelayS: 90, elapsedS: 5 }),
    ).toBe(40);
  });

  it('parses systemd durations into microseconds', () => {
    expect(parseSystemdDurationToMicroseconds('90s')).toBe(90_000_000);
    expect(parseSystemdDurationToMicroseconds('3min')).toBe(180_000_000);
    expect(parseSystemdDurationToMicroseconds('1min 30s')).toBe(90_000_000);
    expect(parseSystemdDurationToMicroseconds('45')).toBe(45_000_000);
    expect(parseSystemdDurationToMicroseconds('500ms')).toBe(500_000);
    expect(parseSystemdDurationToMicroseconds('1h')).toBe(3_600_000_000);
    for (const junk of ['', 'forever', '10 parsecs', '0s', 'infinity']) {
      expect(parseSystemdDurationToMicroseconds(junk)).toBeUndefined();
    }
  });
});
