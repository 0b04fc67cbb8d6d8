import { describe, expect, it } from 'vitest';
import { ResponseStore } from './response-store.js';

const response = (profile: string, id: string) => ({
  id,
  profile,
  sessionId: `s-${id}`,
  lastMessageId: 1,
  body: { id },
});

describe('ResponseStore', () => {
  it('keeps the most recently used responses per profile and drops the oldest past capacity', () => {
    const store = new ResponseStore(2);
    store.put(response('default', 'a'));
    store.put(response('default', 'b'));
    expect(store.get('default', 'a')?.id).toBe('a'); // a is now the most recent
    store.put(response('default', 'c'));
    expect(store.get('default', 'b')).toBeUndefined();
    expect(store.get('default', 'a')?.id).toBe('a');
    expect(store.get('default', 'c')?.id).toBe('c');
  });

  it('never answers for another profile, and deletes once', () => {
    const store = new ResponseStore();
    store.put(response('work', 'a'));
    expect(store.get('default', 'a')).toBeUndefined();
    expect(store.delete('default', 'a')).toBe(false);
    expect(store.delete('work', 'a')).toBe(true);
    expect(store.delete('work', 'a')).toBe(false);
  });
});
