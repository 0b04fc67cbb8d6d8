import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { GATEWAY_STARTS_LOG_FILE_NAME } from './respawn-storm.js';
import { startRaceAgent } from './test-race-agent.js';

describe('the respawn-storm ledger, across processes', () => {
  it('counts two starts recorded at once: the later writer does not drop the earlier start', async () => {
    const home = (await tempHome()).path;
    const ledger = path.join(home, GATEWAY_STARTS_LOG_FILE_NAME);
    // The first start stops after reading the ledger, right before it writes it back.
    const first = await startRaceAgent({
      pauses: [{ label: 'first-writes', calls: ['rename'], arg: 1, path: ledger }],
    });
    const firstStart = first.start('recordStart', { home, nowMs: 1_000_000 });
    await first.paused('first-writes');

    // The second start records in full meanwhile, or waits for the first one's token.
    const second = await startRaceAgent();
    const secondStart = second.start('recordStart', { home, nowMs: 1_001_000 });
    await second.waitFor(
      (event) =>
        event.event === 'token-busy' || (event.event === 'done' && event.id === secondStart),
    );
    await first.resume('first-writes');
    await first.done(firstStart);
    expect(await second.done(secondStart)).toBe(2);

    const lines = (await readFile(ledger, 'utf8')).trim().split('\n');
    expect(lines.sort()).toEqual(['1000.000', '1001.000']);
  });
});
