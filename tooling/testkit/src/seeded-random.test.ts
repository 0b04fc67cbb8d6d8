import { describe, expect, it } from 'vitest';
import { seededRandom } from './seeded-random.js';

describe('seededRandom', () => {
  it('replays the same numbers in [0, 1) for the same seed, and others for another seed', () => {
    const take = (seed: number) => Array.from({ length: 1000 }, seededRandom(seed));
    const first = take(7);
    expect(take(7)).toEqual(first);
    expect(take(8)).not.toEqual(first);
    expect(first.every((value) => value >= 0 && value < 1)).toBe(true);
    expect(new Set(first).size).toBeGreaterThan(990);
  });
});
