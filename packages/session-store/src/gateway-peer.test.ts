import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';

describe('findLatestGatewaySessionForPeer', () => {
  it('prefers a live row with messages, accepts a recoverable end, and is fenced by a later reset', async () => {
    const { store } = await openTestStore();
    const peer = { sessionKey: 'tg:42', source: 'telegram' };
    await store.createSession({
      id: 'empty',
      source: 'telegram',
      sessionKey: 'tg:42',
      startedAt: 30,
    });
    await store.createSession({
      id: 'talked',
      source: 'telegram',
      sessionKey: 'tg:42',
      startedAt: 20,
    });
    await store.appendMessage('talked', { role: 'user', content: 'hi', timestamp: 25 });
    expect(store.findLatestGatewaySessionForPeer(peer)?.id).toBe('talked');
    await store.endSession('talked', 'agent_close');
    expect(store.findLatestGatewaySessionForPeer(peer)?.id).toBe('talked');
    await store.createSession({
      id: 'reset',
      source: 'telegram',
      sessionKey: 'tg:42',
      startedAt: 40,
    });
    await store.endSession('reset', 'session_reset');
    await store.endSession('empty', 'new_session');
    expect(store.findLatestGatewaySessionForPeer(peer)).toBeUndefined();
  });

  it('falls back to the full peer tuple when no row carries the key', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'legacy',
      source: 'discord',
      chatId: 'c',
      chatType: 'dm',
      userId: 'u',
    });
    await store.appendMessage('legacy', { role: 'user', content: 'hello' });
    const found = store.findLatestGatewaySessionForPeer({
      sessionKey: 'dc:c',
      source: 'discord',
      chatId: 'c',
      chatType: 'dm',
      userId: 'u',
    });
    expect(found?.id).toBe('legacy');
    expect(
      store.findLatestGatewaySessionForPeer({
        sessionKey: 'dc:c',
        source: 'discord',
        chatId: 'other',
      }),
    ).toBeUndefined();
  });
});
