import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { BOT_CHAT_TITLE } from './index.js';

describe('numbered title variants', () => {
  it('resolves the latest numbered continuation, but Bot Chat only exactly', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'one', source: 'cli', title: 'Trip' });
    await store.createSession({ id: 'two', source: 'cli', title: 'Trip #2' });
    await store.createSession({ id: 'ten', source: 'cli', title: 'Trip #10' });
    await store.createSession({ id: 'other', source: 'cli', title: 'Trip planner #3' });
    expect(store.resolveSessionByTitle('Trip')?.id).toBe('ten');
    expect(store.getNextTitleInLineage('Trip')).toBe('Trip #11');
    expect(store.getNextTitleInLineage('Trip #2')).toBe('Trip #11');
    expect(store.getNextTitleInLineage('Fresh')).toBe('Fresh #2');
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    await store.createSession({ id: 'bot2', source: 'desktop', title: `${BOT_CHAT_TITLE} #2` });
    expect(store.resolveSessionByTitle(BOT_CHAT_TITLE)?.id).toBe('bot');
  });

  it('finds nothing for a lookup longer than any title, as the exact lookup does', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'one', source: 'cli', title: 'Trip' });
    const long = `Trip ${'x'.repeat(10_000)}`;
    expect(store.resolveSessionByTitle(long)).toBeUndefined();
    expect(store.getSessionByTitle(long)).toBeUndefined();
    expect(store.resolveSessionByTitle('   ')).toBeUndefined();
  });
});
