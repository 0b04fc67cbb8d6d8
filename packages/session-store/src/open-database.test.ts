import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { assertSqliteFile, filesystemTypeOf, isWalResetAffected } from './open-database.js';

describe('open-database helpers', () => {
  it('knows which SQLite builds carry the WAL-reset bug', () => {
    expect(isWalResetAffected('3.7.0')).toBe(true);
    expect(isWalResetAffected('3.51.2')).toBe(true);
    expect(isWalResetAffected('3.51.3')).toBe(false);
    expect(isWalResetAffected('3.53.2')).toBe(false);
    expect(isWalResetAffected('3.6.23')).toBe(false);
  });

  it('accepts an absent or empty file and refuses a short or foreign one', async () => {
    const home = await tempHome();
    const file = path.join(home.path, 'state.db');
    expect(() => assertSqliteFile(file)).not.toThrow();
    writeFileSync(file, '');
    expect(() => assertSqliteFile(file)).not.toThrow();
    writeFileSync(file, 'SQLite format 3\u0000');
    expect(() => assertSqliteFile(file)).toThrow(
      expect.objectContaining({ code: 'database_corrupt' }),
    );
  });

  it('finds the filesystem type of a path on Linux', () => {
    if (process.platform !== 'linux') return;
    expect(typeof filesystemTypeOf('/')).toBe('string');
  });
});
