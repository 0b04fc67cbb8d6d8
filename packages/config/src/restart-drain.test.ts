import { describe, expect, it } from 'vitest';
import { DEFAULT_RESTART_DRAIN_TIMEOUT_S, resolveRestartDrainTimeout } from './restart-drain.js';

describe('resolveRestartDrainTimeout', () => {
  it('defaults to 30 s when the key is absent', () => {
    expect(DEFAULT_RESTART_DRAIN_TIMEOUT_S).toBe(30);
    expect(resolveRestartDrainTimeout({})).toBe(30);
  });

  it('reads the top-level key first, then gateway.restart_drain_timeout', () => {
    expect(resolveRestartDrainTimeout({ restart_drain_timeout: 5 })).toBe(5);
    expect(resolveRestartDrainTimeout({ gateway: { restart_drain_timeout: '7.5' } })).toBe(7.5);
    expect(
      resolveRestartDrainTimeout({
        restart_drain_timeout: 0,
        gateway: { restart_drain_timeout: 9 },
      }),
    ).toBe(0);
  });

  it('falls back to the default with a warning that names the key, never the value', () => {
    const warnings: string[] = [];
    expect(
      resolveRestartDrainTimeout({ gateway: { restart_drain_timeout: 'soon' } }, (message) =>
        warnings.push(message),
      ),
    ).toBe(30);
    expect(resolveRestartDrainTimeout({ restart_drain_timeout: 100_000 })).toBe(30);
    expect(warnings).toEqual([
      'gateway.restart_drain_timeout must be a finite number from 0 to 86400; using the default 30',
    ]);
  });
});
