import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { spawnProcess, startModelServer } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { CLI_BIN, parseJson, runCli, testHome, writeModelConfig } from './helpers.js';

interface ChatMessage {
  role: string;
  content: unknown;
}

function userTexts(body: unknown): string[] {
  const messages = (body as { messages?: ChatMessage[] }).messages ?? [];
  return messages
    .filter((message) => message.role === 'user')
    .map((message) => String(message.content));
}

describe('hermes chat -q', () => {
  it('prints the answer on stdout and tool activity on stderr, and stores the conversation', async () => {
    const { env, home, userHome } = await testHome();
    await writeFile(path.join(userHome, 'notes.txt'), 'hi from the notes\n');
    const model = await startModelServer({
      script: [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { text: 'The notes say hi.' },
      ],
    });
    await writeModelConfig(home, model.baseUrl);
    const result = await runCli(['chat', '-q', 'What is in notes.txt?'], { env, cwd: userHome });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The notes say hi.\n');
    expect(result.stderr).toContain('⚙ read_file notes.txt');
    // The tool really ran: its result went back to the model.
    expect(JSON.stringify(model.modelRequests[1]?.body)).toContain('hi from the notes');
    const listed = parseJson<{ sessions: { source: string; message_count: number }[] }>(
      await runCli(['sessions', 'list', '--json'], { env }),
    );
    expect(listed.sessions).toEqual([expect.objectContaining({ source: 'cli', message_count: 4 })]);
  });

  it('prints one JSON result with --json, reads the message from stdin with -q -, and continues with --continue', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({
      script: [{ text: 'first answer' }, { text: 'second answer' }],
    });
    await writeModelConfig(home, model.baseUrl);
    const first = await runCli(['chat', '-q', '-', '--json'], {
      env,
      input: 'remember the number 42\n',
    });
    expect(first.code).toBe(0);
    const body = parseJson<{
      session_id: string;
      status: string;
      final_response: string;
      usage: { apiCalls: number };
    }>(first);
    expect(body).toMatchObject({
      status: 'completed',
      final_response: 'first answer',
      usage: { apiCalls: 1 },
    });
    const second = await runCli(['chat', '--continue', '-q', 'what was the number?', '--json'], {
      env,
    });
    expect(parseJson(second)).toMatchObject({
      session_id: body.session_id,
      final_response: 'second answer',
    });
    expect(userTexts(model.modelRequests[1]?.body)).toEqual([
      'remember the number 42\n',
      'what was the number?',
    ]);
    const resumed = await runCli(['chat', '--resume', 'no-such-session', '-q', 'hi'], { env });
    expect(resumed.code).toBe(EXIT.failure);
    expect(resumed.stderr).toContain('no session matches');
  });

  it('says which keys to set when no model is configured (exit 1) and creates no session', async () => {
    const { env } = await testHome();
    const result = await runCli(['chat', '-q', 'hello'], { env });
    expect(result.code).toBe(EXIT.failure);
    expect(result.stderr).toContain(
      "model.base_url is not set — set it in config.yaml or run 'hermes config set model.base_url …'",
    );
    expect(parseJson(await runCli(['sessions', 'list', '--json'], { env }))).toMatchObject({
      total: 0,
    });
  });

  it("fails with the provider's message when the model refuses (exit 1)", async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({
      script: [{ error: { status: 400, message: 'context too long' } }],
    });
    await writeModelConfig(home, model.baseUrl);
    const result = await runCli(['chat', '-q', 'hello'], { env });
    expect(result.code).toBe(EXIT.failure);
    expect(result.stderr).toContain('context too long');
    expect(result.stdout).toBe('');
  });

  it('stops a streaming answer on Ctrl-C (exit 130) and keeps what was said', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({
      script: [
        {
          text: 'one two three four five six seven eight nine ten',
          chunkSize: 4,
          chunkDelayMs: 400,
        },
      ],
    });
    await writeModelConfig(home, model.baseUrl);
    const chat = await spawnProcess({
      command: process.execPath,
      args: [CLI_BIN, 'chat', '-q', 'count'],
      env,
    });
    await chat.waitForLine(/one/, 20_000);
    chat.child.kill('SIGINT');
    const exit = await chat.exited;
    expect(exit.code).toBe(EXIT.interrupted);
    expect(chat.stdout()).not.toContain('ten');
    const sessions = parseJson<{ sessions: { id: string }[] }>(
      await runCli(['sessions', 'list', '--json'], { env }),
    );
    const shown = parseJson<{ messages: { role: string; content: string }[] }>(
      await runCli(['sessions', 'show', sessions.sessions[0]?.id ?? '', '--json'], { env }),
    );
    const last = shown.messages.at(-1);
    expect(last?.role).toBe('assistant');
    expect(last?.content).toMatch(/^one/);
  });
});

describe('slash commands under hermes chat -q', () => {
  it('exits 1 with the reason on stderr when a command cannot be done, and --json prints the error', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({
      script: [{ text: 'first answer' }, { text: 'second answer' }],
    });
    await writeModelConfig(home, model.baseUrl);
    const noConversation = await runCli(['chat', '-q', '/title Trip'], { env });
    expect(noConversation.code).toBe(EXIT.failure);
    expect(noConversation.stdout).toBe('');
    expect(noConversation.stderr).toContain('No conversation yet — send a message first.');
    const asJson = await runCli(['chat', '-q', '/title Trip', '--json'], { env });
    expect(asJson.code).toBe(EXIT.failure);
    expect(parseJson<{ error: { code: string; message: string } }>(asJson).error).toMatchObject({
      code: 'no_conversation',
      message: 'No conversation yet — send a message first.',
    });
    // A title another conversation already has.
    expect((await runCli(['chat', '-q', 'plan a trip'], { env })).code).toBe(EXIT.ok);
    const titled = await runCli(['chat', '--continue', '-q', '/title Trip'], { env });
    expect(titled.code).toBe(EXIT.ok);
    expect(titled.stdout).toBe('Title set: Trip\n');
    expect((await runCli(['chat', '-q', 'something else'], { env })).code).toBe(EXIT.ok);
    const taken = await runCli(['chat', '--continue', '-q', '/title Trip'], { env });
    expect(taken.code).toBe(EXIT.failure);
    expect(taken.stdout).toBe('');
    expect(taken.stderr).toContain("Title 'Trip' is already in use");
    // Only invisible characters: no title at all, so nothing is cleared.
    const invisible = await runCli(['chat', '--continue', '-q', '/title \u200B\u200B'], { env });
    expect(invisible.code).toBe(EXIT.usage);
    expect(invisible.stderr).toContain('the title is empty');
    const tripHolder = await runCli(['chat', '--resume', 'Trip', '-q', '/title'], { env });
    expect(tripHolder.stdout).toBe('Title: Trip\n');
  });

  it('lists an untitled conversation by its first message marked (untitled) in /sessions, and shows control characters of stored text as visible text', async () => {
    const { env, home } = await testHome();
    const store = await openSessionStore({ path: path.join(home, 'state.db') });
    const titled = await store.createSession({ source: 'cli', title: 'Trip planning' });
    await store.appendMessage(titled.id, { role: 'user', content: 'Find trains' });
    const untitled = await store.createSession({ source: 'telegram' });
    await store.appendMessage(untitled.id, {
      role: 'user',
      content: 'Book a table \u001b[2J\u001b]0;pwned\u0007now',
    });
    await store.appendMessage(untitled.id, { role: 'assistant', content: 'Done \u001b[31mred' });
    await store.close();

    const listed = await runCli(['chat', '-q', '/sessions'], { env });
    expect(listed.code).toBe(EXIT.ok);
    const row = (id: string) => listed.stdout.split('\n').find((line) => line.includes(id)) ?? '';
    expect(row(titled.id)).toMatch(new RegExp(`${titled.id}  Trip planning  `));
    expect(row(untitled.id)).toContain(
      `${untitled.id}  (untitled) Book a table ^[[2J^[]0;pwned^Gnow  `,
    );
    const history = await runCli(['chat', '--resume', untitled.id, '-q', '/history'], { env });
    expect(history.code).toBe(EXIT.ok);
    expect(history.stdout).toBe('you: Book a table ^[[2J^[]0;pwned^Gnow\nhermes: Done ^[[31mred\n');
    for (const output of [listed.stdout, history.stdout]) {
      expect(output).not.toContain('\u001b');
      expect(output).not.toContain('\u0007');
    }
  });

  it('exits 2 for a command used without what it needs', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({ script: [] });
    await writeModelConfig(home, model.baseUrl);
    const queued = await runCli(['chat', '-q', '/queue'], { env });
    expect(queued.code).toBe(EXIT.usage);
    expect(queued.stdout).toBe('');
    expect(queued.stderr).toContain('Usage: /queue <message>');
    expect(model.modelRequests).toHaveLength(0);
  });

  it('still shows a refusal in the interactive chat and carries on', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({ script: [{ text: 'answer after refusal' }] });
    await writeModelConfig(home, model.baseUrl);
    const result = await runCli(['chat'], { env, input: '/title Early\nhello\n' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /No conversation yet — send a message first\.[\s\S]*answer after refusal/,
    );
  });
});

describe('hermes chat with piped input', () => {
  it('answers each line in order, then exits 0 at the end of the input', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({
      script: [{ text: 'answer one' }, { text: 'answer two' }],
    });
    await writeModelConfig(home, model.baseUrl);
    const result = await runCli(['chat'], {
      env,
      input: 'first line\n/title Piped\nsecond line\n',
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/answer one\n[\s\S]*Title set: Piped\n[\s\S]*answer two\n/);
    expect(userTexts(model.modelRequests[1]?.body)).toEqual(['first line', 'second line']);
  });
});

describe('/review from hermes chat -q', () => {
  it('dispatches a background reviewer and, with --wait, prints its findings and the answer to them', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({
      script: [
        { text: 'Done: upload() retries 3 times with backoff.' },
        { text: 'REVIEW: the retry loop never resets its delay (uploader.ts:12).' },
        { text: 'Thanks — I will reset the delay after a success.' },
      ],
    });
    await writeModelConfig(home, model.baseUrl);
    expect((await runCli(['chat', '-q', 'Add retries to the uploader.'], { env })).code).toBe(0);
    const review = await runCli(
      ['chat', '--continue', '-q', '/review focus on the retry loop', '--wait'],
      { env },
    );
    expect(review.code).toBe(0);
    expect(review.stdout).toContain('Review started. Results will return here.');
    expect(review.stdout).toContain('Background result: Review: focus on the retry loop');
    expect(review.stdout).toContain(
      'REVIEW: the retry loop never resets its delay (uploader.ts:12).',
    );
    expect(review.stdout).toContain('Thanks — I will reset the delay after a success.');
    // The reviewer was briefed with the conversation; the result re-entered the same session.
    const reviewerRequest = JSON.stringify(model.modelRequests[1]?.body);
    expect(reviewerRequest).toContain('Add retries to the uploader.');
    expect(reviewerRequest).toContain('Done: upload() retries 3 times');
    expect(userTexts(model.modelRequests[2]?.body).at(-1)).toMatch(
      /^\[ASYNC DELEGATION BATCH COMPLETE — /,
    );
    const sessions = parseJson<{ sessions: { id: string; message_count: number }[] }>(
      await runCli(['sessions', 'list', '--json'], { env }),
    );
    expect(sessions.sessions).toHaveLength(1);
  });

  it('runs the review to the end without --wait and prints it at once', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({
      script: [{ text: 'Here is the plan.' }, { text: 'REVIEW: the plan skips tests.' }],
    });
    await writeModelConfig(home, model.baseUrl);
    await runCli(['chat', '-q', 'Plan the migration.'], { env });
    const review = await runCli(['chat', '--continue', '-q', '/review'], { env });
    expect(review.code).toBe(0);
    expect(review.stdout).toMatch(/^⚖ Review completed synchronously on test-model — results:\n\[/);
    expect(review.stdout).toContain('REVIEW: the plan skips tests.');
  });

  it('refuses an empty conversation with the engine text', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({ script: [] });
    await writeModelConfig(home, model.baseUrl);
    const review = await runCli(['chat', '-q', '/review'], { env });
    expect(review.code).toBe(EXIT.failure);
    expect(review.stdout).toBe('');
    expect(review.stderr).toContain('Nothing to review yet — the conversation is empty.');
    expect(model.modelRequests).toHaveLength(0);
  });
});
