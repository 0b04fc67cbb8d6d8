import { describe, expect, it, vi } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { forkSession, SessionStoreError } from './index.js';

// Generated ids come from this module: the first two draws repeat one id, as two sessions
// started in the same second may (six random hex digits).
const drawn = vi.hoisted(() => ({ ids: [] as string[], next: 0 }));
vi.mock('./session-ids.js', () => ({
  newSessionId: () => {
    const id = drawn.ids[drawn.next] ?? `20261203_120000_${String(drawn.next).padStart(6, '0')}`;
    drawn.next += 1;
    return id;
  },
}));

describe('generated session ids', () => {
  it('draws again when a generated id is already taken', async () => {
    const { store } = await openTestStore();
    drawn.ids = ['20261203_120000_aaaaaa', '20261203_120000_aaaaaa', '20261203_120000_bbbbbb'];
    drawn.next = 0;
    const first = await store.createSession({ source: 'cli' });
    const second = await store.createSession({ source: 'cli', title: 'second' });
    expect(first.id).toBe('20261203_120000_aaaaaa');
    expect(second.id).toBe('20261203_120000_bbbbbb');
    expect(store.getSession(second.id)?.title).toBe('second');
  });

  it('refuses a caller’s own id that is taken, without drawing another', async () => {
    const { store } = await openTestStore();
    drawn.ids = [];
    await store.createSession({ id: 'mine', source: 'cli' });
    const error = await store.createSession({ id: 'mine', source: 'cli' }).catch((e) => e);
    expect(SessionStoreError.isInstance(error) && error.code).toBe('session_exists');
  });

  it('gives up with session_exists when every draw is taken', async () => {
    const { store } = await openTestStore();
    drawn.ids = Array.from({ length: 20 }, () => '20261203_120000_cccccc');
    drawn.next = 0;
    await store.createSession({ source: 'cli' });
    const error = await store.createSession({ source: 'cli' }).catch((e) => e);
    expect(SessionStoreError.isInstance(error) && error.code).toBe('session_exists');
    expect(drawn.next).toBe(1 + 8);
  });
});

describe('newId: a caller’s id generator', () => {
  it('draws from the caller’s generator again when its id is taken', async () => {
    const { store } = await openTestStore();
    const ids = ['api_1_aa', 'api_1_aa', 'api_1_bb'];
    const newId = () => ids.shift() ?? 'api_exhausted';
    expect((await store.createSession({ source: 'api_server', newId })).id).toBe('api_1_aa');
    expect((await store.createSession({ source: 'api_server', newId })).id).toBe('api_1_bb');
  });
});

describe('forkSession: newChildId', () => {
  it('draws the child’s id again when the generated one is taken', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'parent', source: 'api_server' });
    await store.appendMessages('parent', [{ role: 'user', content: 'hello' }]);
    await store.createSession({ id: 'api_1_taken', source: 'api_server' });
    const ids = ['api_1_taken', 'api_1_fresh'];
    const { child, copied } = await forkSession(store, {
      sessionId: 'parent',
      newChildId: () => ids.shift() ?? 'api_exhausted',
    });
    expect(child.id).toBe('api_1_fresh');
    expect(copied).toBe(1);
  });
});
