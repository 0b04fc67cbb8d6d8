import { describe, expect, it } from 'vitest';
import {
  resolveCronDrainBudget,
  resolveLaunchdStopBudget,
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

  it('caps the drain 10 s below launchd ExitTimeOut and fires the shutdown watchdog before it', () => {
    // The reference's example: ExitTimeOut 60 ⇒ drain 50.
    expect(resolveLaunchdStopBudget({ drainS: 60 })).toEqual({
      drainS: 50,
      shutdownWatchdogDelayS: 55,
      exitTimeOutS: 60,
    });
    // A short drain keeps its own watchdog delay while that is under the cap.
    expect(resolveLaunchdStopBudget({ drainS: 0, exitTimeOutS: 120 })).toEqual({
      drainS: 0,
      shutdownWatchdogDelayS: 60,
      exitTimeOutS: 120,
    });
    // launchd's own default (20 s): drain 10, watchdog 15 — always before the SIGKILL.
    expect(resolveLaunchdStopBudget({ drainS: 30, exitTimeOutS: 20 })).toEqual({
      drainS: 10,
      shutdownWatchdogDelayS: 15,
      exitTimeOutS: 20,
    });
    expect(resolveLaunchdStopBudget({ drainS: 30, exitTimeOutS: 6 })).toEqual({
      drainS: 0,
      shutdownWatchdogDelayS: 3,
      exitTimeOutS: 6,
    });
    for (const exitTimeOutS of [1, 5, 10, 20, 60, 90, 600]) {
      for (const drainS of [0, 10, 60, 3600]) {
        const budget = resolveLaunchdStopBudget({ drainS, exitTimeOutS });
        expect(budget.shutdownWatchdogDelayS).toBeLessThan(exitTimeOutS);
        expect(budget.drainS).toBeLessThanOrEqual(budget.shutdownWatchdogDelayS);
      }
    }
    // ExitTimeOut 0 is "no SIGKILL" to launchd: nothing to cap.
    expect(resolveLaunchdStopBudget({ drainS: 300, exitTimeOutS: 0 })).toEqual({
      drainS: 300,
      shutdownWatchdogDelayS: 360,
      exitTimeOutS: Number.POSITIVE_INFINITY,
    });
    expect(resolveLaunchdStopBudget({ drainS: 60, exitTimeOutS: Number.NaN }).drainS).toBe(50);
  });
});
