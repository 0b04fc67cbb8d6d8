import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HASH_SLICE_BYTES, sha256HexInSlices } from './sha256-hex.js';

describe('sha256HexInSlices', () => {
  it('matches a one-pass SHA-256 across slice boundaries and for empty input', async () => {
    for (const size of [0, 1, HASH_SLICE_BYTES, HASH_SLICE_BYTES + 1, 3 * HASH_SLICE_BYTES - 7]) {
      const data = randomBytes(size);
      expect(await sha256HexInSlices(data)).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });

  it('lets the event loop turn between slices', async () => {
    let turns = 0;
    let running = true;
    const spin = () => {
      turns += 1;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    await sha256HexInSlices(Buffer.alloc(4 * HASH_SLICE_BYTES, 1));
    running = false;
    expect(turns).toBeGreaterThanOrEqual(2);
  });
});
