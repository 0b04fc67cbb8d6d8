import path from 'node:path';
import { spawnProcess } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { scanForeignHolders } from './foreign-holders.js';

const fixture = path.join(import.meta.dirname, '../test/fixtures/hold-database.mjs');

describe('scanForeignHolders', () => {
  it.runIf(process.platform === 'linux')(
    'ignores this process and finds another one holding the file',
    async () => {
      const { databasePath } = await openTestStore();
      const sameProcess = new BetterSqlite3(databasePath);
      try {
        expect(await scanForeignHolders({ databasePath })).toEqual([]);
      } finally {
        sameProcess.close();
      }
      const holder = await spawnProcess({
        command: process.execPath,
        args: [fixture, databasePath],
        readyLine: 'holding',
      });
      expect(await scanForeignHolders({ databasePath })).toEqual([
        expect.objectContaining({ pid: holder.pid }),
      ]);
      await holder.stop();
      expect(await scanForeignHolders({ databasePath })).toEqual([]);
    },
  );

  it('fails closed when the file cannot be resolved', async () => {
    expect(await scanForeignHolders({ databasePath: '/nonexistent/state.db' })).toEqual([
      expect.objectContaining({ pid: -1 }),
    ]);
  });
});
