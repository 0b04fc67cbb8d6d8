import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import {
  BOT_CHAT_TITLE,
  LIST_SESSIONS_DEFAULT_LIMIT,
  LIST_SESSIONS_MAX_LIMIT,
  type SessionStore,
  shapePreview,
} from './index.js';

async function seed(store: SessionStore, count: number, prefix = 's'): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    await store.createSession({
      id: `${prefix}${String(index).padStart(4, '0')}`,
      source: 'cli',
      startedAt: 1000 + index,
    });
  }
}

describe('listSessionsRich', () => {
  it('excludes hidden rows unless asked, and the archived-only view includes hidden archived rows', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'visible', source: 'cli' });
    await store.createSession({ id: 'hidden', source: 'desktop', hidden: true });
    await store.createSession({
      id: 'hidden-archived',
      source: 'desktop',
      hidden: true,
      archived: true,
    });
    const ids = (page: { sessions: { id: string }[] }) => page.sessions.map((row) => row.id).sort();
    expect(ids(store.listSessionsRich())).toEqual(['visible']);
    expect(ids(store.listSessionsRich({ includeHidden: true }))).toEqual(['hidden', 'visible']);
    expect(ids(store.listSessionsRich({ archivedOnly: true }))).toEqual(['hidden-archived']);
  });

  it('leaves internal sources out unless asked for by name', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'k', source: 'kanban' });
    await store.createSession({ id: 'c', source: 'cli' });
    expect(store.listSessionsRich().sessions.map((row) => row.id)).toEqual(['c']);
    expect(store.listSessionsRich({ source: 'kanban' }).sessions.map((row) => row.id)).toEqual([
      'k',
    ]);
  });

  it('shows a compression root once, with its tip fields and the root title as fallback', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'root', source: 'cli', title: 'Long talk' });
    await store.appendMessage('root', { role: 'user', content: 'the very first question' });
    const tip = await store.publishCompressionChild({ parentId: 'root', summary: 'summary' });
    await store.appendMessage(tip, { role: 'user', content: 'a follow-up question' });
    const [row, ...rest] = store.listSessionsRich().sessions;
    expect(rest).toHaveLength(0);
    expect(row).toMatchObject({
      id: tip,
      title: 'Long talk',
      lineageRootId: 'root',
      lineageIds: ['root', tip],
    });
    expect(row?.preview).toBe('a follow-up question');
    expect(row?.endedAt).toBeNull();
  });

  it('orders by the newest activity anywhere in the lineage', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'old', source: 'cli', startedAt: 10 });
    await store.createSession({ id: 'new', source: 'cli', startedAt: 20 });
    const tip = await store.publishCompressionChild({ parentId: 'old', summary: 's' });
    await store.appendMessage(tip, { role: 'user', content: 'fresh', timestamp: 30 });
    expect(store.listSessionsRich().sessions.map((row) => row.lineageRootId)).toEqual([
      'old',
      'new',
    ]);
  });

  it('adds pinned rows back after paging', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'pinned-old', source: 'cli', startedAt: 1 });
    await store.setPinned('pinned-old', true);
    await seed(store, 5);
    const page = store.listSessionsRich({ limit: 2 });
    expect(page.sessions.map((row) => row.id)).toEqual(['s0004', 's0003', 'pinned-old']);
    expect(page.sessions[2]?.pinnedBackfill).toBe(true);
    expect(page.hasMore).toBe(true);
    expect(store.listSessionsRich({ limit: 2, includePinned: false }).sessions).toHaveLength(2);
  });

  it('finds an old row outside the recency window by its title, in SQL', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 'ancient',
      source: 'cli',
      title: 'Tax return 2019',
      startedAt: 1,
    });
    await seed(store, 60);
    expect(store.listSessionsRich().sessions.some((row) => row.id === 'ancient')).toBe(false);
    const found = store.listSessionsRich({ searchQuery: 'return 2019' });
    expect(found.sessions.map((row) => row.id)).toEqual(['ancient']);
    expect(store.listSessionsRich({ searchQuery: 'anci' }).sessions.map((row) => row.id)).toEqual([
      'ancient',
    ]);
    expect(store.listSessionsRich({ searchQuery: '100%' }).sessions).toEqual([]);
  });

  it('defaults to 50 rows, clamps to 200, and pages by offset or cursor without gaps', async () => {
    const { store } = await openTestStore();
    await seed(store, 230);
    expect(store.listSessionsRich().sessions).toHaveLength(LIST_SESSIONS_DEFAULT_LIMIT);
    expect(store.listSessionsRich({ limit: 10_000 }).sessions).toHaveLength(
      LIST_SESSIONS_MAX_LIMIT,
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = store.listSessionsRich({ limit: 70, cursor });
      seen.push(...page.sessions.map((row) => row.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(230);
    expect(new Set(seen).size).toBe(230);
    expect(
      store.listSessionsRich({ limit: 10, offset: 225 }).sessions.map((row) => row.id),
    ).toEqual(['s0004', 's0003', 's0002', 's0001', 's0000']);
    expect(() => store.listSessionsRich({ cursor: 'garbage' })).toThrow(
      expect.objectContaining({ code: 'invalid_cursor' }),
    );
  });

  it('marks unread rows when activity is newer than the read watermark', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    expect(store.listSessionsRich().sessions[0]?.unread).toBe(false);
    await store.setRead('s', true);
    await store.appendMessage('s', {
      role: 'assistant',
      content: 'news',
      timestamp: Date.now() / 1000 + 60,
    });
    expect(store.listSessionsRich().sessions[0]?.unread).toBe(true);
  });

  it('filters by sources, excluded sources, working directory, message count, id and peer key, with a total', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'cli-app', source: 'cli', cwd: '/work/app', startedAt: 1 });
    await store.createSession({ id: 'cli-src', source: 'cli', cwd: '/work/app/src', startedAt: 2 });
    await store.createSession({ id: 'cli-apple', source: 'cli', cwd: '/work/apple', startedAt: 3 });
    await store.createSession({
      id: 'tg-peer',
      source: 'telegram',
      sessionKey: 'tg:7',
      startedAt: 4,
    });
    await store.createSession({ id: 'kanban-task', source: 'kanban', startedAt: 5 });
    await store.appendMessages('cli-app', [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
    ]);
    // A compressed lineage: its messages count across the chain, its ids are searchable.
    await store.appendMessage('tg-peer', { role: 'user', content: 'hi' });
    const tip = await store.publishCompressionChild({
      parentId: 'tg-peer',
      summary: 'sum',
      childId: 'tg-peer-tip-xyz',
    });
    await store.appendMessage(tip, { role: 'assistant', content: 'hello again' });
    const ids = (options: Parameters<SessionStore['listSessionsRich']>[0]) =>
      store
        .listSessionsRich(options)
        .sessions.map((row) => row.lineageRootId)
        .sort();
    expect(ids({ sources: ['telegram', 'kanban'] })).toEqual(['kanban-task', 'tg-peer']);
    expect(ids({ excludeSources: ['cli'] })).toEqual(['tg-peer']);
    expect(ids({ cwdPrefix: '/work/app' })).toEqual(['cli-app', 'cli-src']);
    expect(ids({ cwdPrefix: '/work/app/' })).toEqual(['cli-app', 'cli-src']);
    expect(ids({ minMessageCount: 2 })).toEqual(['cli-app', 'tg-peer']);
    expect(ids({ minMessageCount: 3 })).toEqual(['tg-peer']); // 1 in the root + 2 in the tip
    expect(ids({ idQuery: 'tip-x' })).toEqual(['tg-peer']);
    expect(ids({ idQuery: 'apple' })).toEqual(['cli-apple']);
    expect(ids({ sessionKey: 'tg:7' })).toEqual(['tg-peer']);
    expect(store.listSessionsRich({ sessionKey: 'tg:7' }).sessions[0]?.id).toBe(tip);
    const page = store.listSessionsRich({ limit: 2, includeTotal: true });
    expect(page.sessions).toHaveLength(2);
    expect(page.total).toBe(4); // kanban is internal
    expect(store.listSessionsRich({ limit: 2 }).total).toBeNull();
    expect(
      store.listSessionsRich({ includeTotal: true, sources: ['cli'], cwdPrefix: '/work' }).total,
    ).toBe(3);
    expect(() => store.listSessionsRich({ sources: 'cli' as never })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
    expect(() => store.listSessionsRich({ minMessageCount: -1 })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});

/** The preview the per-row rules give: the first visible user message of a session, shaped. */
function expectedPreview(store: SessionStore, sessionId: string): string | null {
  const first = store
    .getMessages(sessionId)
    .find(
      (row) =>
        row.role === 'user' &&
        row.compressedSummary === 0 &&
        row.displayKind !== 'hidden' &&
        (row.content ?? '') !== '',
    );
  return first?.content ? shapePreview(first.content) : null;
}

describe('listSessionsRich projects a page in a few statements, as the per-row walk would', () => {
  it('matches the per-row projection through random compressions, ends, reopenings and deletions', async () => {
    const { store } = await openTestStore();
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const live: string[] = [];
    for (let index = 0; index < 40; index += 1) {
      const id = `r${index}`;
      await store.createSession({ id, source: index % 9 === 0 ? 'telegram' : 'cli' });
      await store.appendMessage(id, { role: 'user', content: `first question of ${id}` });
      live.push(id);
    }
    for (let step = 0; step < 160; step += 1) {
      const target = live[Math.floor(random() * live.length)] as string;
      const choice = random();
      if (choice < 0.35) {
        const child = await store
          .publishCompressionChild({ parentId: target, summary: `summary ${step}` })
          .catch(() => undefined); // an ended parent refuses: that is part of the mix
        if (child) {
          live.push(child);
          if (random() < 0.6)
            await store.appendMessage(child, { role: 'user', content: `after ${step}` });
        }
      } else if (choice < 0.5) {
        await store.endSession(target, random() < 0.5 ? 'agent_close' : 'session_reset');
      } else if (choice < 0.6) {
        await store.reopenSession(target);
      } else if (choice < 0.68) {
        await store.deleteSession(target);
        live.splice(live.indexOf(target), 1);
      } else if (choice < 0.75) {
        await store.setPinned(target, random() < 0.7);
      } else {
        await store.appendMessage(target, { role: 'assistant', content: `reply ${step}` });
      }
    }
    const page = store.listSessionsRich({ limit: 25 });
    const everything = store.listSessionsRich({ limit: 200, includePinned: false });
    expect(everything.sessions.length).toBeGreaterThan(25);
    // The mix reached what the walk must get right: chains of several segments.
    expect(everything.sessions.some((item) => item.lineageIds.length >= 3)).toBe(true);
    for (const item of [...page.sessions, ...everything.sessions]) {
      const root = store.requireSession(item.lineageRootId);
      const chain = store.getCompressionChain(root.id);
      const tip = store.requireSession(chain[chain.length - 1] as string);
      expect(item.id).toBe(tip.id);
      expect(item.lineageIds).toEqual(chain);
      expect(item.title).toBe(tip.title ?? root.title);
      expect(item.endedAt).toBe(tip.endedAt);
      expect(item.messageCount).toBe(tip.messageCount);
      expect(item.lastActive).toBe(root.lineageActiveAt);
      expect(item.preview).toBe(
        expectedPreview(store, tip.id) ??
          (tip.id === root.id ? null : expectedPreview(store, root.id)),
      );
    }
    expect(page.sessions.filter((item) => item.pinnedBackfill).every((item) => item.pinned)).toBe(
      true,
    );
  });

  it('previews a first message of any size or shape from the start of its text', async () => {
    const { store } = await openTestStore();
    const huge = `Please review this file:\n${'const answer = 42;\n'.repeat(20_000)}`;
    const mostlyBlank = `${' \n\t'.repeat(3000)}the question after the blank lines`;
    const emoji = `${'x'.repeat(40)}${'👨‍👩‍👧'.repeat(200)}`;
    const cases = { huge, mostlyBlank, emoji, short: 'just this' };
    for (const [id, content] of Object.entries(cases)) {
      await store.createSession({ id, source: 'cli' });
      await store.appendMessage(id, { role: 'user', content });
    }
    const previews = Object.fromEntries(
      store.listSessionsRich().sessions.map((row) => [row.id, row.preview]),
    );
    for (const [id, content] of Object.entries(cases)) {
      expect(previews[id], id).toBe(shapePreview(content));
    }
    expect(previews.mostlyBlank).toBe('the question after the blank lines');
  });

  it('filters by an exact title anywhere in the lineage, through the title index', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 'trip', source: 'cli', title: 'Trip' });
    await store.createSession({ id: 'trip-2', source: 'cli', title: 'Trip planning' });
    await store.createSession({
      id: 'bot',
      source: 'desktop',
      title: BOT_CHAT_TITLE,
      hidden: true,
    });
    const tip = await store.publishCompressionChild({ parentId: 'trip', summary: 's' });
    const ids = (title: string, includeHidden = false) =>
      store.listSessionsRich({ title, includeHidden }).sessions.map((row) => row.id);
    expect(ids('Trip')).toEqual([tip]); // the lineage, shown at its tip
    expect(ids('  Trip  ')).toEqual([tip]); // sanitised as titles are
    expect(ids('Trip planning')).toEqual(['trip-2']);
    expect(ids('trip')).toEqual([]); // exact, not a substring or case-folded match
    expect(ids(BOT_CHAT_TITLE)).toEqual([]);
    expect(ids(BOT_CHAT_TITLE, true)).toEqual(['bot']);
    expect(ids('x'.repeat(500))).toEqual([]); // longer than any title: nothing, no error
    expect(() => store.listSessionsRich({ title: 42 as never })).toThrow(
      expect.objectContaining({ code: 'invalid_argument' }),
    );
  });
});
