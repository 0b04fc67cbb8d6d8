import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { pidFilePath } from './pid-file.js';
import { parsePidRecord } from './pid-record.js';
import { runtimeLockPath } from './runtime-lock.js';
import { type RaceAgent, type RaceEvent, startRaceAgent } from './test-race-agent.js';

async function holderOf(file: string): Promise<number | null> {
  try {
    return parsePidRecord(await readFile(file, 'utf8'))?.pid ?? null;
  } catch {
    return null;
  }
}

/** Until `agent`'s operation `id` is done or it waits for a takeover token another holds. */
function doneOrWaitingForToken(agent: RaceAgent, id: number): Promise<RaceEvent> {
  return agent.waitFor(
    (event) => event.event === 'token-busy' || (event.event === 'done' && event.id === id),
  );
}

// The owner is a race agent, whose command line is not a gateway's: to another process its live
// claim is not a gateway's and is taken over (as a program embedding the gateway without passing
// `isGatewayCommandLine` would see). The owner's own removal of its files must then never remove
// the files the taker wrote.
describe('releasing a claim, across processes', () => {
  it.each([
    ['gateway.pid', pidFilePath],
    ['gateway.lock', runtimeLockPath],
  ] as const)(
    'an owner that judged %s its own, then lost it to a taker, does not remove the taker’s',
    async (_name, fileOf) => {
      const home = (await tempHome()).path;
      const file = fileOf(home);
      // The owner stops after reading its file and judging it its own, right before removing it.
      const owner = await startRaceAgent({
        pauses: [{ label: 'owner-removes', calls: ['rm', 'unlink'], path: file }],
      });
      expect(await owner.run('claim', { home })).toEqual({ claimed: true, reason: null });
      const release = owner.start('release');
      await owner.paused('owner-removes');

      const taker = await startRaceAgent();
      const claim = taker.start('claim', { home });
      await doneOrWaitingForToken(taker, claim);
      await owner.resume('owner-removes');
      await owner.done(release);

      expect(await taker.done(claim)).toEqual({ claimed: true, reason: null });
      expect(await holderOf(pidFilePath(home))).toBe(taker.pid);
      expect(await holderOf(runtimeLockPath(home))).toBe(taker.pid);
    },
  );

  it.each([
    ['gateway.pid', pidFilePath],
    ['gateway.lock', runtimeLockPath],
  ] as const)(
    'the exit hook of an owner that lost %s to a taker meanwhile does not remove the taker’s',
    async (name, fileOf) => {
      const home = (await tempHome()).path;
      const file = fileOf(home);
      // An exit hook cannot wait for a message: the owner blocks on a FIFO until the test writes.
      const fifo = path.join((await tempHome()).path, `${name}.fifo`);
      execFileSync('mkfifo', [fifo]);
      const owner = await startRaceAgent({
        pauses: [{ label: 'exit-removes', calls: ['rmSync', 'unlinkSync'], path: file, fifo }],
      });
      expect(await owner.run('claim', { home })).toEqual({ claimed: true, reason: null });
      owner.start('exit');
      await owner.paused('exit-removes');

      const taker = await startRaceAgent();
      const claim = taker.start('claim', { home });
      await doneOrWaitingForToken(taker, claim);
      await owner.resume('exit-removes');
      expect(await owner.exited).toBe(0);

      expect(await taker.done(claim)).toEqual({ claimed: true, reason: null });
      expect(await holderOf(pidFilePath(home))).toBe(taker.pid);
      expect(await holderOf(runtimeLockPath(home))).toBe(taker.pid);
    },
  );
});
