import { readFile } from 'node:fs/promises';
import { spawnProcess } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  isProcessAlive,
  isRecordedProcessLive,
  readProcessCommandLine,
  readProcessStartTime,
  startTimesConflict,
} from './process-identity.js';

describe('process identity', () => {
  it('reads a start-time fingerprint for a live process and none for a dead one', async () => {
    const own = await readProcessStartTime(process.pid);
    expect(typeof own).toBe('number');
    const child = await spawnProcess({ command: 'sleep', args: ['30'] });
    expect(await readProcessStartTime(child.pid)).toBeGreaterThanOrEqual(own as number);
    await child.stop();
    expect(await readProcessStartTime(child.pid)).toBeNull();
  });

  it('treats a PID whose fingerprint changed as a different process', async () => {
    const child = await spawnProcess({ command: 'sleep', args: ['30'] });
    const startTime = await readProcessStartTime(child.pid);
    expect(await isRecordedProcessLive(child.pid, startTime)).toBe(true);
    expect(await isRecordedProcessLive(child.pid, (startTime as number) + 1)).toBe(false);
    expect(await isRecordedProcessLive(child.pid, null)).toBe(true);
    await child.stop();
    expect(await isRecordedProcessLive(child.pid, startTime)).toBe(false);
  });

  it('counts an exited, unreaped (zombie) process as dead', async () => {
    const parent = await spawnProcess({
      command: 'sh',
      args: ['-c', 'sleep 0 & echo "zombie=$!"; exec sleep 30'],
      readyLine: /zombie=\d+/,
    });
    const zombie = Number(parent.stdout().match(/zombie=(\d+)/)?.[1]);
    const deadline = performance.now() + 5000;
    let state = '';
    while (performance.now() < deadline) {
      const stat = await readFile(`/proc/${zombie}/stat`, 'utf8').catch(() => '');
      state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(state).toBe('Z');
    expect(await isProcessAlive(zombie)).toBe(false);
    expect(await isProcessAlive(parent.pid)).toBe(true);
  });

  it('reads the command line of a live process, exactly from /proc and word by word from ps', async () => {
    const child = await spawnProcess({ command: 'sleep', args: ['30'] });
    expect(await readProcessCommandLine(child.pid)).toEqual(['sleep', '30']);
    // The ps path other POSIX systems take (procps answers `ps -o args=` the same way here).
    expect(await readProcessCommandLine(child.pid, 'darwin')).toEqual(['sleep', '30']);
    await child.stop();
    expect(await readProcessCommandLine(child.pid)).toBeNull();
    expect(await readProcessCommandLine(child.pid, 'darwin')).toBeNull();
    expect(await readProcessCommandLine(0)).toBeNull();
    const own = await readProcessCommandLine(process.pid);
    expect(own?.[0]).toMatch(/node/);
  });

  it('only calls fingerprints conflicting when both are known', () => {
    expect(startTimesConflict(10, 11)).toBe(true);
    expect(startTimesConflict(10, 10)).toBe(false);
    expect(startTimesConflict(null, 11)).toBe(false);
    expect(startTimesConflict(10, undefined)).toBe(false);
  });

  it('rejects impossible PIDs', async () => {
    expect(await isProcessAlive(0)).toBe(false);
    expect(await isProcessAlive(-1)).toBe(false);
    expect(await readProcessStartTime(1.5)).toBeNull();
  });
});
