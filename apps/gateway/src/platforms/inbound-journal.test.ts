import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from './inbound.js';
import { InboundJournal } from './inbound-journal.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

function message(messageId: string, receivedAt: number): InboundMessage {
  return {
    platform: 'telegram',
    chatId: '42',
    threadId: null,
    messageId,
    userId: '7',
    userName: 'ada',
    text: `text ${messageId}`,
    receivedAt,
  };
}

describe('inbound journal', () => {
  it('records each message once, keeps state changes across a reload, and forgets removed ones', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'journal-'));
    roots.push(directory);
    const journal = new InboundJournal(directory);
    expect(await journal.load()).toEqual([]);
    const fresh = await journal.record([message('2', 20), message('1', 10)]);
    expect(fresh.map((entry) => entry.ref)).toEqual(['telegram:42:2', 'telegram:42:1']);
    expect(await journal.record([message('1', 10)])).toEqual([]); // a repeat is not new
    await journal.update('telegram:42:1', {
      state: 'started',
      sessionId: 's1',
      baselineMessageId: 9,
    });
    await journal.update('telegram:42:2', { state: 'stored', sessionId: 's1', userMessageId: 12 });

    // A new process sees what the previous one wrote, oldest first.
    const reloaded = new InboundJournal(directory);
    await writeFile(path.join(directory, 'junk.json'), '{not json');
    await writeFile(path.join(directory, '.tmp-half-written'), '{"ref":');
    const entries = await reloaded.load();
    expect(entries.map((entry) => [entry.ref, entry.state])).toEqual([
      ['telegram:42:1', 'started'],
      ['telegram:42:2', 'stored'],
    ]);
    expect(entries[0]).toMatchObject({ sessionId: 's1', baselineMessageId: 9, text: 'text 1' });
    expect(entries[1]).toMatchObject({ userMessageId: 12 });
    await reloaded.remove('telegram:42:1');
    expect(reloaded.has('telegram:42:1')).toBe(false);
    expect((await readdir(directory)).filter((name) => name.startsWith('telegram'))).toEqual([
      'telegram_42_2.json',
    ]);
  });
});
