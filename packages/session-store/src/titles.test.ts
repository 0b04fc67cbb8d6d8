import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore, reopenStore } from '../test/helpers.js';
import { BOT_CHAT_TITLE, ERROR_MESSAGES, MAX_TITLE_LENGTH, sanitizeTitle } from './index.js';

describe('titles', () => {
  it('sanitises invisible characters and whitespace, and refuses over-long titles', () => {
    expect(sanitizeTitle('  My\u200B  chat\u202E \n')).toBe('My chat');
    expect(sanitizeTitle(' \u200B ')).toBeNull();
    expect(() => sanitizeTitle('x'.repeat(MAX_TITLE_LENGTH + 1))).toThrow(
      ERROR_MESSAGES.titleTooLong(MAX_TITLE_LENGTH + 1, MAX_TITLE_LENGTH),
    );
  });

  it('keeps titles unique and names the holder in the refusal', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'one', source: 'cli', title: 'Plans' });
    await store.createSession({ id: 'two', source: 'cli' });
    await expect(store.setTitle('two', 'Plans')).rejects.toThrow(
      ERROR_MESSAGES.titleInUse('Plans', 'one'),
    );
    await expect(
      store.createSession({ id: 'three', source: 'cli', title: 'Plans' }),
    ).rejects.toMatchObject({
      code: 'title_in_use',
    });
    expect(store.getSession('three')).toBeUndefined();
  });

  it('an automatic title never overwrites a higher-ranked one', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli', title: 'Named by me' });
    expect(await store.setTitle('s', 'LLM idea', { source: 'llm' })).toBe(false);
    expect(store.requireSession('s').title).toBe('Named by me');
    await store.createSession({ id: 'd', source: 'cli', title: 'derived', titleSource: 'derived' });
    expect(await store.setTitle('d', 'LLM idea', { source: 'llm' })).toBe(true);
    expect(store.requireSession('d')).toMatchObject({ title: 'LLM idea', titleSource: 'llm' });
  });

  it('refuses to rename a hidden canonical Bot Chat for a person and ignores automatic renames', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    await expect(store.setTitle('bot', 'Something else')).rejects.toThrow(
      ERROR_MESSAGES.canonicalRename,
    );
    expect(await store.setTitle('bot', 'Auto title', { source: 'llm' })).toBe(false);
    expect(store.requireSession('bot').title).toBe(BOT_CHAT_TITLE);
  });

  it('a deliberately archived hidden canonical chat releases its name to the replacement', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'old-bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    await store.setArchived('old-bot', true);
    const replacement = await store.createSession({
      id: 'new-bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    expect(replacement.title).toBe(BOT_CHAT_TITLE);
    expect(store.requireSession('old-bot').title).toBeNull();
    expect(store.getSessionByTitle(BOT_CHAT_TITLE, { includeHidden: true })?.id).toBe('new-bot');
  });

  it('a compressed, deliberately archived canonical chat releases its name: judged at the tip, not the compression-ended root', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'old-bot', source: 'desktop', title: BOT_CHAT_TITLE });
    const tip = await store.publishCompressionChild({ parentId: 'old-bot', summary: 'so far' });
    await store.setArchived('old-bot', true); // by a person: the tip has no end reason
    expect(store.requireSession('old-bot')).toMatchObject({ endReason: 'compression', hidden: 0 });
    expect(store.requireSession(tip)).toMatchObject({ endReason: null, archived: 1 });
    expect(await store.canonicalSession()).toBeNull();
    const replacement = await store.createSession({
      id: 'new-bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
    });
    expect(replacement.title).toBe(BOT_CHAT_TITLE);
    expect(store.requireSession('old-bot').title).toBeNull();
    expect((await store.canonicalSession())?.id).toBe('new-bot');
  });

  it('an archived canonical chat whose tip ended at a boundary releases its name; a recoverable one keeps it', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'reset-bot', source: 'desktop', title: BOT_CHAT_TITLE });
    const resetTip = await store.publishCompressionChild({ parentId: 'reset-bot', summary: 's' });
    await store.endSession(resetTip, 'session_reset');
    await store.setArchived('reset-bot', true);
    await store.createSession({ id: 'reaped-bot', source: 'desktop', title: BOT_CHAT_TITLE });
    expect(store.requireSession('reset-bot').title).toBeNull();

    const reapedTip = await store.publishCompressionChild({ parentId: 'reaped-bot', summary: 's' });
    await store.endSession(reapedTip, 'ws_orphan_reap'); // machinery: lookups bring it back
    await store.setArchived('reaped-bot', true);
    await expect(
      store.createSession({ id: 'claimant', source: 'desktop', title: BOT_CHAT_TITLE }),
    ).rejects.toMatchObject({ code: 'title_in_use' });
    expect(await store.canonicalSession()).toMatchObject({
      id: 'reaped-bot',
      resolvedId: reapedTip,
    });
  });

  it('a live canonical chat keeps its name against a new claimant', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    await expect(
      store.createSession({ id: 'other', source: 'desktop', title: BOT_CHAT_TITLE }),
    ).rejects.toMatchObject({
      code: 'title_in_use',
    });
  });

  it('a compression child can take over its ancestor title', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'a', source: 'cli', title: 'Trip' });
    const child = await store.publishCompressionChild({ parentId: 'a', summary: 's' });
    await store.setTitle(child, 'Trip');
    expect(store.requireSession(child).title).toBe('Trip');
    expect(store.requireSession('a').title).toBeNull();
  });

  it('exact lookup is case-sensitive and hides hidden rows unless asked', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'h', source: 'desktop', title: 'Secret', hidden: true });
    expect(store.getSessionByTitle('Secret')).toBeUndefined();
    expect(store.getSessionByTitle('Secret', { includeHidden: true })?.id).toBe('h');
    expect(store.getSessionByTitle('secret', { includeHidden: true })).toBeUndefined();
  });

  it('heals duplicate titles on open: the newest keeps it and the unique index is back', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'x', source: 'cli' });
    await store.createSession({ id: 'y', source: 'cli' });
    await store.close();
    const raw = new BetterSqlite3(databasePath);
    raw.exec('DROP INDEX idx_sessions_title_unique');
    raw.exec("UPDATE sessions SET title = 'Dup'");
    raw.close();
    const healed = await reopenStore(databasePath);
    expect(healed.getSession('x')?.title).toBeNull();
    expect(healed.getSession('y')?.title).toBe('Dup');
    const probe = new BetterSqlite3(databasePath, { readonly: true });
    const index = probe
      .prepare("SELECT name FROM sqlite_master WHERE name = 'idx_sessions_title_unique'")
      .get();
    probe.close();
    expect(index).toBeDefined();
  });
});
