import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
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
      expect.stringMatching(/^telegram_42_2-[0-9a-f]{16}\.json$/),
    ]);
  });

  it('keeps refs apart that differ only in characters a file name cannot hold, and takes ids of any length', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'journal-'));
    roots.push(directory);
    const journal = new InboundJournal(directory);
    const long = 'd'.repeat(5000);
    const ids = ['a.b', 'a_b', 'a/b', `${long}1`, `${long}2`];
    const recorded = await journal.record(ids.map((id, index) => message(id, index)));
    expect(recorded).toHaveLength(5);
    await journal.remove('telegram:42:a.b');
    await journal.remove(`telegram:42:${long}1`);
    const reloaded = await new InboundJournal(directory).load();
    expect(reloaded.map((entry) => entry.messageId)).toEqual(['a_b', 'a/b', `${long}2`]);
  });

  it('does not hold a message it could not write: the retry records it anew', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'journal-'));
    roots.push(root);
    const directory = path.join(root, 'inbound');
    const journal = new InboundJournal(directory);
    await journal.load();
    // The folder made a file: nothing can be written in it.
    await rm(directory, { recursive: true });
    await writeFile(directory, '');
    await expect(journal.record([message('1', 1)])).rejects.toThrow();
    expect(journal.has('telegram:42:1')).toBe(false);
    await rm(directory);
    await mkdir(directory);
    expect((await journal.record([message('1', 1)])).map((entry) => entry.ref)).toEqual([
      'telegram:42:1',
    ]);
    expect(await readdir(directory)).toHaveLength(1);
  });

  it('removes an entry an earlier version wrote under its old file name', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'journal-'));
    roots.push(directory);
    const old = { ...message('9', 1), ref: 'telegram:42:9', seq: 1, state: 'received' };
    await writeFile(path.join(directory, 'telegram_42_9.json'), JSON.stringify(old));
    const journal = new InboundJournal(directory);
    expect((await journal.load()).map((entry) => entry.ref)).toEqual(['telegram:42:9']);
    await journal.update('telegram:42:9', { state: 'started', sessionId: 's1' });
    expect(await readdir(directory)).toEqual(['telegram_42_9.json']);
    await journal.remove('telegram:42:9');
    expect(await readdir(directory)).toEqual([]);
  });
});
