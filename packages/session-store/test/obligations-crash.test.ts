import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { obligationIdFor } from '../src/index.js';
import { runFixture } from './processes.js';

const OBLIGATIONS = 200;
const KILLS = 5;

describe('delivery obligations under SIGKILL', () => {
  it('delivers every obligation exactly once across random kills and restarts', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    let interrupted = 0;
    for (let round = 0; round < KILLS; round += 1) {
      const child = await runFixture(
        'deliver-obligations.ts',
        [databasePath, String(OBLIGATIONS)],
        'ready',
      );
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
      child.kill('SIGKILL');
      await child.exited;
      if (!child.stdout().includes('done')) interrupted += 1;
    }
    expect(interrupted).toBeGreaterThan(0); // the kills really landed mid-delivery
    const last = await runFixture(
      'deliver-obligations.ts',
      [databasePath, String(OBLIGATIONS)],
      'ready',
    );
    const exit = await last.exited;
    expect(exit.code, last.stderr()).toBe(0);

    const database = new BetterSqlite3(databasePath, { readonly: true });
    try {
      const deliveries = new Map<string, number>();
      for (const id of database
        .prepare('SELECT obligation_id FROM platform_inbox')
        .pluck()
        .all() as string[]) {
        deliveries.set(id, (deliveries.get(id) ?? 0) + 1);
      }
      const expected = Array.from({ length: OBLIGATIONS }, (_, index) =>
        obligationIdFor({
          sessionKey: `peer-${index % 5}`,
          messageRef: `message-${index}`,
          content: `reply ${index}`,
        }),
      );
      const lost = expected.filter((id) => !deliveries.has(id));
      const duplicated = [...deliveries.values()].filter((times) => times > 1);
      expect({ lost: lost.length, duplicated: duplicated.length }).toEqual({
        lost: 0,
        duplicated: 0,
      });
      expect(deliveries.size).toBe(OBLIGATIONS);
      const states = database
        .prepare('SELECT state, count(*) AS n FROM delivery_obligations GROUP BY state')
        .all() as { state: string; n: number }[];
      expect(states).toEqual([{ state: 'delivered', n: OBLIGATIONS }]);
    } finally {
      database.close();
    }
  }, 120_000);
});
