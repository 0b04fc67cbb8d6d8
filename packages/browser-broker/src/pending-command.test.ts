import { describe, expect, it } from 'vitest';
import { mintCommandId } from './pending-command.js';

describe('mintCommandId', () => {
  it('mints distinct 32-hex ids across pool refills', () => {
    const ids = new Set(Array.from({ length: 1_000 }, () => mintCommandId()));
    expect(ids.size).toBe(1_000);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
  });
});
