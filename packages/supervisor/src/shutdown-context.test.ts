import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { formatShutdownContext, snapshotShutdownContext } from './shutdown-context.js';

describe('shutdown context', () => {
  it('names the signal, this process and its parent from /proc', async () => {
    const home = await tempHome();
    const context = snapshotShutdownContext({ home: home.path, signal: 'SIGTERM', env: {} });
    expect(context).toMatchObject({
      signal: 'SIGTERM',
      signal_num: 15,
      pid: process.pid,
      ppid: process.ppid,
    });
    if (process.platform === 'linux') {
      expect(context.self.name).toBe('node');
      expect(context.self.cmdline).toContain('node');
      expect(context.self.cmdline?.length).toBeLessThanOrEqual(300);
    }
    expect(context.under_systemd).toBe(process.ppid === 1);
    expect(snapshotShutdownContext({ home: home.path, signal: 10, env: {} }).signal).toBe(
      'SIGUSR1',
    );
    expect(snapshotShutdownContext({ home: home.path, signal: 9, env: {} }).signal).toBe(
      'signal#9',
    );
    expect(snapshotShutdownContext({ home: home.path, env: {} }).signal).toBe('UNKNOWN');
  });

  it('detects systemd and a takeover marker naming this process, and formats one line', async () => {
    const home = await tempHome();
    await writeFile(
      path.join(home.path, '.gateway-takeover.json'),
      JSON.stringify({ target_pid: process.pid }),
    );
    await writeFile(path.join(home.path, '.gateway-planned-stop.json'), '{}');
    const context = snapshotShutdownContext({
      home: home.path,
      signal: 'SIGTERM',
      env: { INVOCATION_ID: 'abc', JOURNAL_STREAM: '8:123' },
    });
    expect(context).toMatchObject({
      under_systemd: true,
      systemd_invocation_id: 'abc',
      takeover_marker_for_self: true,
    });
    const line = formatShutdownContext(context);
    expect(line).toMatch(
      /^signal=SIGTERM under_systemd=yes parent_pid=\d+ parent_name=\S+ loadavg_1m=\S+/,
    );
    expect(line).toContain('takeover_marker_present=self planned_stop_marker_present=yes');
    expect(line).toMatch(/ parent_cmdline='.*'$/);
  });
});
