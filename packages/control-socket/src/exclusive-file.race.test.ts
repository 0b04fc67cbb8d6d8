import { spawnSync } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { takeoverTokenPath } from './exclusive-file.js';
import { type RaceEvent, startRaceAgent } from './test-race-agent.js';

/** The PID of a process that has already exited (and been reaped). */
function deadPid(): number {
  const result = spawnSync(process.execPath, ['-e', '']);
  if (typeof result.pid !== 'number') throw new Error('could not spawn a short-lived process');
  return result.pid;
}

/** A takeover token whose holder died while holding it, in either format. */
async function plantDeadToken(token: string, format: 'file' | 'folder'): Promise<void> {
  const record = JSON.stringify({ pid: deadPid(), start_time: 1 });
  if (format === 'file') {
    await writeFile(token, record);
    return;
  }
  await mkdir(token);
  await writeFile(path.join(token, `${deadPid()}.0123456789ab.owner`), record);
}

describe('takeover token, across processes', () => {
  it.each([
    ['a token file of the earlier format', 'file'],
    ['a token folder', 'folder'],
  ] as const)(
    'two takers that both judged a dead holder’s token (%s) never hold it at once, and free it when done',
    async (_name, format) => {
      const home = await tempHome();
      const target = path.join(home.path, 'gateway.lock');
      await writeFile(target, 'dead holder');
      const token = takeoverTokenPath(target);
      await plantDeadToken(token, format);

      // The first taker stops right after judging the dead token, before removing it; had it moved
      // somebody's token aside meanwhile, it stops again before putting it back.
      const first = await startRaceAgent({
        pauses: [
          { label: 'clear', calls: ['rename', 'unlink'], path: token, prefix: true },
          { label: 'put-back', calls: ['link'], arg: 1, path: token, after: 'clear' },
          { label: 'first-removes', calls: ['rm'], path: target },
        ],
      });
      const firstRun = first.start('removeStaleFile', { target, stalePrefix: 'dead' });
      await first.paused('clear');

      // The second taker clears the same dead token, takes its own, and stops inside: it holds the
      // token while it removes the stale target.
      const second = await startRaceAgent({
        pauses: [{ label: 'second-removes', calls: ['rm'], path: target }],
      });
      const secondRun = second.start('removeStaleFile', { target, stalePrefix: 'dead' });
      await second.paused('second-removes');

      const since = first.events.length;
      await first.resume('clear');
      const next = await first.waitFor(
        (event: RaceEvent) =>
          event.event === 'token-busy' || event.event === 'done' || event.event === 'paused',
        since,
      );
      // Whatever the first taker does next, it must not be inside while the second still is.
      expect(next).not.toMatchObject({ event: 'paused', label: 'first-removes' });
      expect(next).not.toMatchObject({ event: 'done' });

      await second.resume('second-removes');
      expect(await second.done(secondRun)).toBe(true);
      if (next.event === 'paused' && next.label === 'put-back') await first.resume('put-back');
      // The path is free: the stale file went, and no token is left to stall the next taker.
      expect(await first.done(firstRun)).toBe(true);
      expect(await readdir(home.path)).toEqual([]);
    },
  );
});
