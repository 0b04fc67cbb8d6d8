import { describe, expect, it } from 'vitest';
import { BrowserControlBroker } from './broker.js';
import { getBrowserControlBroker } from './shared-broker.js';

describe('getBrowserControlBroker', () => {
  it('returns one broker per process so every transport shares the registry', () => {
    const broker = getBrowserControlBroker();
    expect(broker).toBeInstanceOf(BrowserControlBroker);
    expect(getBrowserControlBroker()).toBe(broker);
  });
});
