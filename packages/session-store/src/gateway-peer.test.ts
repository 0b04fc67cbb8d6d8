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

  it('does not resume, through the tuple fallback, a session the user reset past', async () => {
    const { store } = await openTestStore();
    const tuple = { source: 'discord', chatId: 'c', chatType: 'dm', userId: 'u' };
    const peer = { sessionKey: 'dc:c', ...tuple };
    // The conversation the user moved past: reaped by machinery (recoverable), with messages.
    await store.createSession({ id: 'before', sessionKey: 'dc:c', ...tuple, startedAt: 10 });
    await store.appendMessage('before', { role: 'user', content: 'old topic', timestamp: 11 });
    await store.endSession('before', 'agent_close');
    expect(store.findLatestGatewaySessionForPeer(peer)?.id).toBe('before');
    // The user resets: a later row of the same peer ends with a reset boundary.
    await store.createSession({ id: 'boundary', sessionKey: 'dc:c', ...tuple, startedAt: 20 });
    await store.endSession('boundary', 'session_reset');
    expect(store.findLatestGatewaySessionForPeer(peer)).toBeUndefined();

    // A legacy row without a key is fenced by a later reset found by the tuple alone…
    await store.createSession({ id: 'legacy', source: 'slack', chatId: 'x', startedAt: 10 });
    await store.appendMessage('legacy', { role: 'user', content: 'hi', timestamp: 11 });
    const slackPeer = { sessionKey: 'sl:x', source: 'slack', chatId: 'x' };
    expect(store.findLatestGatewaySessionForPeer(slackPeer)?.id).toBe('legacy');
    await store.createSession({ id: 'slack-reset', source: 'slack', chatId: 'x', startedAt: 20 });
    await store.endSession('slack-reset', 'idle');
    expect(store.findLatestGatewaySessionForPeer(slackPeer)).toBeUndefined();

    // …or by the peer's key alone.
    await store.createSession({ id: 'legacy-2', source: 'matrix', chatId: 'y', startedAt: 10 });
    await store.appendMessage('legacy-2', { role: 'user', content: 'hi', timestamp: 11 });
    const matrixPeer = { sessionKey: 'mx:y', source: 'matrix', chatId: 'y' };
    expect(store.findLatestGatewaySessionForPeer(matrixPeer)?.id).toBe('legacy-2');
    await store.createSession({
      id: 'keyed-reset',
      source: 'matrix',
      sessionKey: 'mx:y',
      startedAt: 20,
    });
    await store.endSession('keyed-reset', 'daily');
    expect(store.findLatestGatewaySessionForPeer(matrixPeer)).toBeUndefined();
  });
});
