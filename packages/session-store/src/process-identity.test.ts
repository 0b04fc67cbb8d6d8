import { spawnProcess } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  currentProcessIdentity,
  isProcessAlive,
  readProcessStartTicks,
} from './process-identity.js';

describe('process identity', () => {
  it('this process is alive under its own start time and not under another', () => {
    const self = currentProcessIdentity();
    expect(isProcessAlive(self)).toBe(true);
    if (self.startTicks !== null)
      expect(isProcessAlive({ pid: self.pid, startTicks: `${self.startTicks}9` })).toBe(false);
    expect(isProcessAlive({ pid: 0 })).toBe(false);
  });

  it('a process that exited is dead', async () => {
    const child = await spawnProcess({
      command: process.execPath,
      args: ['-e', 'console.log("up")'],
      readyLine: 'up',
    });
    const ticks = readProcessStartTicks(child.pid);
    await child.exited;
    await child.stop();
    expect(isProcessAlive({ pid: child.pid, startTicks: ticks })).toBe(false);
  });
});
