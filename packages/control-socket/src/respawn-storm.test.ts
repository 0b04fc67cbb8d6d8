import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { GATEWAY_STARTS_LOG_FILE_NAME, recordStartAndCheckStorm } from './respawn-storm.js';

describe('recordStartAndCheckStorm', () => {
  it('calls more than five starts within 120 s a storm and backs off exponentially up to 300 s', async () => {
    const home = await tempHome();
    let clock = Date.UTC(2026, 0, 1);
    const now = () => clock;
    const checks = [];
    for (let start = 0; start < 13; start += 1) {
      checks.push(await recordStartAndCheckStorm(home.path, { now }));
      clock += 5000;
    }
    expect(checks.slice(0, 5).every((check) => !check.storm && check.backoffSeconds === 0)).toBe(
      true,
    );
    expect(checks.slice(5).map((check) => check.backoffSeconds)).toEqual([
      10, 20, 40, 80, 160, 300, 300, 300,
    ]);
    expect(checks[12]).toMatchObject({ storm: true, startsInWindow: 13 });
  });

  it('forgets starts older than the window', async () => {
    const home = await tempHome();
    let clock = Date.UTC(2026, 0, 1);
    for (let start = 0; start < 6; start += 1) {
      await recordStartAndCheckStorm(home.path, { now: () => clock });
      clock += 1000;
    }
    clock += 121_000;
    expect(await recordStartAndCheckStorm(home.path, { now: () => clock })).toEqual({
      storm: false,
      startsInWindow: 1,
      backoffSeconds: 0,
    });
  });

  it('keeps the ledger bounded and tolerates junk lines', async () => {
    const home = await tempHome();
    const file = path.join(home.path, GATEWAY_STARTS_LOG_FILE_NAME);
    await writeFile(file, 'garbage\n-1\n\n');
    let clock = Date.UTC(2026, 0, 1);
    for (let start = 0; start < 60; start += 1) {
      await recordStartAndCheckStorm(home.path, { now: () => clock });
      clock += 200_000;
    }
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(40);
    expect(lines.every((line) => Number.isFinite(Number(line)))).toBe(true);
  });

  it('never fails the start when the home cannot be written', async () => {
    const check = await recordStartAndCheckStorm('/nonexistent/hermes-home');
    expect(check).toEqual({ storm: false, startsInWindow: 1, backoffSeconds: 0 });
  });
});
