import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { startModelServer } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { parseJson, runCli, spawnInPty, testHome, writeModelConfig } from './helpers.js';

interface ListedSession {
  id: string;
  title: string | null;
  archived: boolean;
  hidden: boolean;
  message_count: number;
}

async function seed(home: string) {
  const store = await openSessionStore({ path: path.join(home, 'state.db') });
  const trip = await store.createSession({
    id: '20250101_100000_aaaaaa',
    source: 'cli',
    title: 'Trip planning',
  });
  await store.appendMessage(trip.id, { role: 'user', content: 'Find trains to Lyon on Friday' });
  await store.appendMessage(trip.id, {
    role: 'assistant',
    content: 'The 9:04 TGV gets to Lyon at 11:00.',
    toolCalls: [
      {
        id: 'c1',
        type: 'function',
        function: { name: 'search_files', arguments: '{"pattern":"lyon"}' },
      },
    ],
  });
  await store.appendMessage(trip.id, {
    role: 'tool',
    toolCallId: 'c1',
    toolName: 'search_files',
    content: 'no matches',
  });
  const notes = await store.createSession({
    id: '20250102_100000_bbbbbb',
    source: 'api_server',
    title: 'Notes',
  });
  await store.appendMessage(notes.id, { role: 'user', content: 'remember the milk' });
  await store.close();
  return { trip: trip.id, notes: notes.id };
}

/** The C0 (but newline and tab), DEL and C1 characters in `text`: what a terminal acts on. */
function controlCharacters(text: string): string[] {
  return [...text].filter((character) => {
    const code = character.codePointAt(0) ?? 0;
    return (
      (code < 0x20 && character !== '\n' && character !== '\t') || (code >= 0x7f && code <= 0x9f)
    );
  });
}

describe('hermes sessions', () => {
  it('lists, shows (by id, prefix or title) and searches, as tables and as JSON', async () => {
    const { env, home } = await testHome();
    const { trip, notes } = await seed(home);
    const listed = parseJson<{ sessions: ListedSession[]; total: number }>(
      await runCli(['sessions', 'list', '--json'], { env }),
    );
    expect(listed.total).toBe(2);
    expect(listed.sessions.map((session) => session.id).sort()).toEqual([trip, notes]);
    const table = await runCli(['sessions', 'list'], { env });
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+TITLE\s+SOURCE\s+MSGS/);
    expect(table.stdout).toContain('Trip planning');

    const onlyApi = parseJson<{ sessions: ListedSession[] }>(
      await runCli(['sessions', 'list', '--source', 'api_server', '--json'], { env }),
    );
    expect(onlyApi.sessions.map((session) => session.id)).toEqual([notes]);

    for (const reference of [trip, '20250101_1', 'Trip planning']) {
      const shown = parseJson<{
        session: { id: string };
        messages: { role: string; content: string }[];
      }>(await runCli(['sessions', 'show', reference, '--json'], { env }));
      expect(shown.session.id).toBe(trip);
      expect(shown.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    }
    const one = await runCli(['sessions', 'show', 'Notes'], { env });
    expect(one.stdout).toContain(' · 1 message');
    expect(one.stdout).not.toContain('1 messages');
    const human = await runCli(['sessions', 'show', 'Trip planning'], { env });
    expect(human.stdout).toContain(' · 3 messages');
    expect(human.stdout).toContain('The 9:04 TGV gets to Lyon at 11:00.');
    expect(human.stdout).toContain('→ search_files({"pattern":"lyon"})');

    const found = parseJson<{ hits: { session_id: string; snippet: string }[] }>(
      await runCli(['sessions', 'search', 'lyon', '--json'], { env }),
    );
    expect(found.hits.map((hit) => hit.session_id)).toContain(trip);
    expect(found.hits.every((hit) => hit.session_id !== notes)).toBe(true);
  });

  it('renames, archives, unarchives, hides, unhides and deletes', async () => {
    const { env, home } = await testHome();
    const { trip, notes } = await seed(home);
    expect((await runCli(['sessions', 'rename', trip, 'Lyon', 'weekend'], { env })).code).toBe(0);
    const ids = async (...flags: string[]) =>
      parseJson<{ sessions: ListedSession[] }>(
        await runCli(['sessions', 'list', '--json', ...flags], { env }),
      )
        .sessions.map((session) => `${session.id}:${session.title}`)
        .sort();
    expect(await ids()).toEqual([`${trip}:Lyon weekend`, `${notes}:Notes`]);

    expect((await runCli(['sessions', 'archive', 'Lyon weekend'], { env })).code).toBe(0);
    expect(await ids()).toEqual([`${notes}:Notes`]);
    expect(await ids('--archived')).toEqual([`${trip}:Lyon weekend`]);
    expect((await runCli(['sessions', 'unarchive', trip], { env })).code).toBe(0);
    expect((await runCli(['sessions', 'hide', notes, '--json'], { env })).code).toBe(0);
    expect(await ids()).toEqual([`${trip}:Lyon weekend`]);
    expect(await ids('--all')).toHaveLength(2);
    expect((await runCli(['sessions', 'unhide', 'Notes'], { env })).code).toBe(0);
    expect(await ids()).toHaveLength(2);

    const refused = await runCli(['sessions', 'delete', notes], { env });
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain('--yes');
    expect((await runCli(['sessions', 'delete', notes, '--yes'], { env })).code).toBe(0);
    expect(await ids('--all')).toEqual([`${trip}:Lyon weekend`]);
  });

  it('deletes a compressed conversation only whole, and only with --cascade (exit 2 before, nothing deleted)', async () => {
    const { env, home } = await testHome();
    const { trip, notes } = await seed(home);
    const store = await openSessionStore({ path: path.join(home, 'state.db') });
    const root = await store.createSession({ source: 'cli', title: 'Long chat' });
    await store.appendMessage(root.id, { role: 'user', content: 'hello' });
    const middle = await store.publishCompressionChild({ parentId: root.id, summary: 'one' });
    const tip = await store.publishCompressionChild({ parentId: middle, summary: 'two' });
    await store.appendMessage(tip, { role: 'user', content: 'and later' });
    await store.close();
    const lineage = [root.id, middle, tip].sort();
    const stored = async () => {
      const reader = await openSessionStore({ path: path.join(home, 'state.db') });
      try {
        const sessions = [root.id, middle, tip, trip, notes].filter((id) => reader.getSession(id));
        const messages = ['hello', 'later'].flatMap((word) => reader.searchMessages(word).hits);
        return { sessions, messages: messages.length };
      } finally {
        await reader.close();
      }
    };

    for (const reference of ['Long chat', root.id, tip]) {
      const refused = await runCli(['sessions', 'delete', reference, '--yes'], { env });
      expect(refused.code, reference).toBe(EXIT.usage);
      expect(refused.stdout, reference).toBe('');
      expect(refused.stderr, reference).toContain('compressed conversation of 3 sessions');
      expect(refused.stderr, reference).toContain('--cascade');
    }
    const asJson = await runCli(['sessions', 'delete', tip, '--yes', '--json'], { env });
    expect(asJson.code).toBe(EXIT.usage);
    expect(parseJson<{ error: { code: string } }>(asJson).error.code).toBe(
      'delete_cascade_requires_confirmation',
    );
    // --cascade is what to delete; --yes still answers the question nobody can be asked here.
    const unconfirmed = await runCli(['sessions', 'delete', tip, '--cascade'], { env });
    expect(unconfirmed.code).toBe(EXIT.usage);
    expect(unconfirmed.stderr).toContain('--yes');
    expect(await stored()).toEqual({ sessions: [root.id, middle, tip, trip, notes], messages: 2 });

    const deleted = await runCli(['sessions', 'delete', middle, '--cascade', '--yes', '--json'], {
      env,
    });
    expect(deleted.code).toBe(EXIT.ok);
    const answer = parseJson<{ id: string; deleted: boolean; deleted_sessions: string[] }>(deleted);
    expect(answer).toMatchObject({ id: middle, deleted: true });
    expect([...answer.deleted_sessions].sort()).toEqual(lineage);
    expect(await stored()).toEqual({ sessions: [trip, notes], messages: 0 });
    const store2 = await openSessionStore({ path: path.join(home, 'state.db') });
    const pair = await store2.createSession({ source: 'cli', title: 'Short chat' });
    await store2.publishCompressionChild({ parentId: pair.id, summary: 'one' });
    await store2.close();
    const human = await runCli(['sessions', 'delete', 'Short chat', '--cascade', '--yes'], { env });
    expect(human.stdout).toBe(
      `Deleted "Short chat" (${pair.id}) and the 1 other session of its compressed conversation.\n`,
    );
    // One session alone needs no --cascade, and takes it without harm.
    const single = await runCli(['sessions', 'delete', notes, '--cascade', '--yes'], { env });
    expect(single.code).toBe(EXIT.ok);
    expect(single.stdout).toBe(`Deleted "Notes" (${notes}).\n`);
  });

  it('refuses to delete a conversation while another process runs a turn in it (exit 1), then deletes it', async () => {
    const { env, home } = await testHome();
    let answer: () => void = () => {};
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const model = await startModelServer({
      script: [
        async () => {
          await answered;
          return { text: 'done at last' };
        },
      ],
    });
    onTestFinished(() => answer());
    await writeModelConfig(home, model.baseUrl);
    const chat = runCli(['chat', '-q', 'take your time'], { env });
    while (model.modelRequests.length === 0)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const [session] = parseJson<{ sessions: ListedSession[] }>(
      await runCli(['sessions', 'list', '--json'], { env }),
    ).sessions;
    const id = session?.id ?? '';

    const busy = await runCli(['sessions', 'delete', id, '--yes'], { env });
    expect(busy.code).toBe(EXIT.failure);
    expect(busy.stderr).toContain('is running a turn');
    const busyJson = await runCli(['sessions', 'delete', id, '--yes', '--json'], { env });
    expect(parseJson<{ error: { code: string } }>(busyJson).error.code).toBe('session_busy');

    answer();
    const finished = await chat;
    expect(finished.code).toBe(EXIT.ok);
    expect(finished.stdout).toBe('done at last\n');
    const deleted = await runCli(['sessions', 'delete', id, '--yes'], { env });
    expect(deleted.code).toBe(EXIT.ok);
    expect(
      parseJson<{ sessions: ListedSession[] }>(
        await runCli(['sessions', 'list', '--json'], { env }),
      ).sessions,
    ).toEqual([]);
  });

  it('deletes nothing when a turn takes the conversation while the confirmation waits (exit 1)', async () => {
    const { env, home } = await testHome();
    const store = await openSessionStore({ path: path.join(home, 'state.db') });
    onTestFinished(() => store.close());
    const session = await store.createSession({ source: 'cli', title: 'Busy later' });
    await store.appendMessages(session.id, [
      { role: 'user', content: 'keep me' },
      { role: 'assistant', content: 'kept' },
    ]);
    const prompt = spawnInPty(['sessions', 'delete', session.id], env);
    // The CLI has checked for a running turn and now waits for the answer; a turn starts in
    // another process (this one) meanwhile.
    await prompt.waitFor(/\[y\/N\]/);
    const holder = await store.acquireTurnLease(session.id);
    expect(holder).not.toBeNull();
    prompt.write('y\r');
    await prompt.waitFor(/is running a turn \(process \d+\)/);
    await prompt.waitFor(/Let the answer finish, or stop it/);
    expect((await prompt.exited).code).toBe(EXIT.failure);
    expect(prompt.screen()).not.toContain('Deleted');
    expect(store.getSession(session.id)?.messageCount).toBe(2);

    await store.releaseTurnLease(session.id, holder ?? '');
    const deleted = await runCli(['sessions', 'delete', session.id, '--yes'], { env });
    expect(deleted.code).toBe(EXIT.ok);
    expect(store.getSession(session.id)).toBeUndefined();
  });

  it('says no session matches a filter instead of "no sessions yet"', async () => {
    const { env, home } = await testHome();
    await seed(home);
    for (const filter of [
      ['--search', '%'],
      ['--source', 'nosuch'],
    ]) {
      const listed = await runCli(['sessions', 'list', ...filter], { env });
      expect(listed.code).toBe(EXIT.ok);
      expect(listed.stdout).toBe('');
      expect(listed.stderr).toContain('No sessions match.');
      expect(listed.stderr).not.toContain('No sessions yet');
    }
    const pastTheEnd = await runCli(['sessions', 'list', '--offset', '5'], { env });
    expect(pastTheEnd.stderr).toContain('No sessions past --offset 5 (2 in all).');
    const fresh = await testHome();
    expect((await runCli(['sessions', 'list'], { env: fresh.env })).stderr).toContain(
      'No sessions yet. Start one with: hermes chat',
    );
  });

  it('lists a first message under PREVIEW, never under TITLE, in plain output as in JSON', async () => {
    const { env, home } = await testHome();
    const { trip } = await seed(home);
    const store = await openSessionStore({ path: path.join(home, 'state.db') });
    const untitled = await store.createSession({ id: '20250103_100000_cccccc', source: 'cli' });
    await store.appendMessage(untitled.id, { role: 'user', content: 'Book a table for two' });
    await store.close();

    const table = await runCli(['sessions', 'list'], { env });
    expect(table.code).toBe(EXIT.ok);
    const [header = '', ...rows] = table.stdout.trimEnd().split('\n');
    const columns = [...header.matchAll(/\S+/g)].map((match) => ({
      name: match[0],
      start: match.index,
    }));
    expect(columns.map((column) => column.name)).toEqual([
      'ID',
      'TITLE',
      'SOURCE',
      'MSGS',
      'ACTIVE',
      'FLAGS',
      'PREVIEW',
    ]);
    const cell = (row: string, name: string) => {
      const index = columns.findIndex((column) => column.name === name);
      return row.slice(columns[index]?.start, columns[index + 1]?.start).trim();
    };
    const rowOf = (id: string) => rows.find((row) => row.startsWith(id)) ?? '';
    expect(cell(rowOf(untitled.id), 'TITLE')).toBe('-');
    expect(cell(rowOf(untitled.id), 'PREVIEW')).toBe('Book a table for two');
    expect(cell(rowOf(trip), 'TITLE')).toBe('Trip planning');
    expect(cell(rowOf(trip), 'PREVIEW')).toBe('Find trains to Lyon on Friday');

    const listed = parseJson<{ sessions: (ListedSession & { preview: string | null })[] }>(
      await runCli(['sessions', 'list', '--json'], { env }),
    );
    expect(listed.sessions.find((session) => session.id === untitled.id)).toMatchObject({
      title: null,
      preview: 'Book a table for two',
    });
  });

  it('shows control characters from a conversation as visible text, never as terminal escapes', async () => {
    const { env, home } = await testHome();
    const store = await openSessionStore({ path: path.join(home, 'state.db') });
    const session = await store.createSession({ source: 'api_server', title: 'Escapes' });
    // Clears the screen, sets the window title, rings the bell, and a C1 CSI (U+009B).
    const hostile = 'look \u001b[2J\u001b]0;pwned\u0007here \u009b31m and a\r\ttab';
    await store.appendMessage(session.id, { role: 'user', content: hostile });
    await store.appendMessage(session.id, {
      role: 'assistant',
      content: 'ok',
      toolCalls: [
        { id: 'c1', type: 'function', function: { name: 'terminal', arguments: '"\u001b[5m"' } },
      ],
    });
    await store.close();
    for (const args of [
      ['sessions', 'list'],
      ['sessions', 'show', 'Escapes'],
      ['sessions', 'search', 'look'],
    ]) {
      const result = await runCli(args, { env });
      expect(result.code, args.join(' ')).toBe(EXIT.ok);
      expect(result.stdout, args.join(' ')).toContain('look ^[[2J^[]0;pwned^Ghere');
      expect(controlCharacters(result.stdout), args.join(' ')).toEqual([]);
    }
    const shown = await runCli(['sessions', 'show', 'Escapes'], { env });
    expect(shown.stdout).toContain('look ^[[2J^[]0;pwned^Ghere \\u009b31m and a^M\ttab');
    expect(shown.stdout).toContain('→ terminal("^[[5m")');
    // JSON is the data as stored.
    const json = parseJson<{ messages: { content: string }[] }>(
      await runCli(['sessions', 'show', 'Escapes', '--json'], { env }),
    );
    expect(json.messages[0]?.content).toBe(hostile);
  });

  it('shows the summary a compressed conversation continues from as a summary, not as something the user said', async () => {
    const { env, home, userHome } = await testHome();
    const store = await openSessionStore({ path: path.join(home, 'state.db') });
    const root = await store.createSession({ source: 'cli', title: 'Long chat' });
    await store.appendMessage(root.id, { role: 'user', content: 'plan a trip to Lyon' });
    const child = await store.publishCompressionChild({
      parentId: root.id,
      summary: '[CONTEXT COMPACTION — REFERENCE ONLY] The user planned a trip to Lyon.',
    });
    await store.appendMessage(child, { role: 'user', content: 'and the hotel?' });
    await store.close();

    const shown = await runCli(['sessions', 'show', child], { env });
    expect(shown.code).toBe(EXIT.ok);
    const blocks = shown.stdout.split('\n\n').slice(1);
    expect(blocks[0]).toMatch(/^summary of the earlier conversation \d{4}-/);
    expect(blocks[0]).toContain('The user planned a trip to Lyon.');
    expect(blocks[1]).toMatch(/^you \d{4}-.*\nand the hotel\?/);

    const file = path.join(userHome, 'long.md');
    await runCli(['sessions', 'export', child, '--format', 'md', '-o', file], { env });
    const markdown = await readFile(file, 'utf8');
    expect(markdown).toContain(
      '## Summary of the earlier conversation\n\n[CONTEXT COMPACTION — REFERENCE ONLY] The user planned a trip to Lyon.',
    );
    expect(markdown).toContain('## User\n\nand the hotel?');
    expect(markdown.match(/## User/g)).toHaveLength(1);

    const history = await runCli(['chat', '--resume', child, '-q', '/history'], { env });
    expect(history.stdout).toBe(
      'summary of the earlier conversation: [CONTEXT COMPACTION — REFERENCE ONLY] The user planned a trip to Lyon.\nyou: and the hotel?\n',
    );
  });

  it('lists whole rows on a terminal that reports no width', async () => {
    const { env, home } = await testHome();
    const { trip } = await seed(home);
    // `script` gives the bin a pseudo-terminal whose size was never set: Node reports 0 columns.
    const terminal = spawnInPty(['sessions', 'list'], env);
    expect((await terminal.exited).code).toBe(0);
    expect(terminal.screen()).toMatch(/^ID\s+TITLE\s+SOURCE\s+MSGS\s+ACTIVE/m);
    expect(terminal.screen()).toContain(`${trip}  Trip planning`);
  });

  it('refuses an empty or invisible title with exit 2 and keeps the old one', async () => {
    const { env, home } = await testHome();
    const { trip } = await seed(home);
    for (const blank of ['   ', '\u200B\u200D', '\t']) {
      const renamed = await runCli(['sessions', 'rename', trip, blank], { env });
      expect(renamed.code).toBe(EXIT.usage);
      expect(renamed.stdout).toBe('');
      expect(renamed.stderr).toContain('the title is empty');
    }
    const long = await runCli(['sessions', 'rename', trip, 'x'.repeat(101)], { env });
    expect(long.code).toBe(EXIT.usage);
    expect(long.stderr).toContain('Title too long (101 chars, max 100)');
    const shown = parseJson<{ session: ListedSession }>(
      await runCli(['sessions', 'show', trip, '--json'], { env }),
    );
    expect(shown.session.title).toBe('Trip planning');
  });

  it('exports JSON lines and Markdown, to stdout or a file', async () => {
    const { env, home, userHome } = await testHome();
    const { trip } = await seed(home);
    const jsonl = await runCli(['sessions', 'export', trip], { env });
    const lines = jsonl.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: 'session', id: trip, title: 'Trip planning' });
    expect(lines.slice(1).map((line) => [line.type, line.role])).toEqual([
      ['message', 'user'],
      ['message', 'assistant'],
      ['message', 'tool'],
    ]);
    const file = path.join(userHome, 'trip.md');
    const md = await runCli(['sessions', 'export', 'Trip planning', '--format', 'md', '-o', file], {
      env,
    });
    expect(md.code).toBe(0);
    const markdown = await readFile(file, 'utf8');
    expect(markdown).toMatch(/^# Trip planning\n/);
    expect(markdown).toContain('## User\n\nFind trains to Lyon on Friday');
    expect(markdown).toContain('## Tool result (search_files)');
  });

  it('says which export file it cannot write (exit 1), without calling it a bug', async () => {
    const { env, home, userHome } = await testHome();
    const { trip } = await seed(home);
    const missingFolder = path.join(userHome, 'no-such-folder', 'trip.jsonl');
    for (const target of [missingFolder, userHome]) {
      const exported = await runCli(['sessions', 'export', trip, '-o', target], { env });
      expect(exported.code).toBe(EXIT.failure);
      expect(exported.stderr).toContain(`cannot write ${target}`);
      expect(exported.stderr).not.toContain('unexpected error');
      expect(exported.stderr).not.toContain('report it');
    }
  });

  it('says which session is unknown or ambiguous (exit 1)', async () => {
    const { env, home } = await testHome();
    await seed(home);
    const unknown = await runCli(['sessions', 'show', 'nothing-like-it'], { env });
    expect(unknown.code).toBe(EXIT.failure);
    expect(unknown.stderr).toContain('no session matches "nothing-like-it"');
    // Longer than any title can be: it matches nothing, it is not a title that is too long.
    const tooLong = await runCli(['sessions', 'show', 'a'.repeat(10_000)], { env });
    expect(tooLong.code).toBe(EXIT.failure);
    expect(tooLong.stderr).toContain('no session matches "aaaa');
    expect(tooLong.stderr).not.toContain('Title too long');
    expect(tooLong.stderr.length).toBeLessThan(1_000);
    const ambiguous = await runCli(['sessions', 'archive', '2025'], { env });
    expect(ambiguous.code).toBe(EXIT.failure);
    expect(ambiguous.stderr).toMatch(/matches 2 sessions/);
    expect((await runCli(['sessions', 'delete', 'nothing', '--yes'], { env })).code).toBe(
      EXIT.failure,
    );
  });
});
