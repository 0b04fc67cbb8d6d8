import { startModelServer } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { parseJson, runCli, spawnInPty, testHome, writeModelConfig } from './helpers.js';

// util-linux `script` gives the chat a pseudo-terminal (BSD `script` takes other arguments).
describe.runIf(process.platform === 'linux')('hermes chat in a terminal', () => {
  it('streams answers, brings /review findings back as a new turn, interrupts on Ctrl-C and leaves on Ctrl-D', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({
      script: [
        { text: 'Done: upload() now retries 3 times.' },
        { text: 'REVIEW-FINDING: the retry delay is never reset.' },
        { text: 'Acknowledged: I will reset the delay.' },
        { text: 'alpha beta gamma delta epsilon zeta eta theta', chunkSize: 3, chunkDelayMs: 500 },
        { text: 'still here' },
      ],
    });
    await writeModelConfig(home, model.baseUrl);
    const chat = spawnInPty(['chat'], env);
    await chat.waitFor(/\/help for commands/);

    chat.write('Add retries to the uploader\r');
    await chat.waitFor(/Done: upload\(\) now retries 3 times\./);

    let mark = chat.screen().length;
    chat.write('/review\r');
    await chat.waitFor(/Review started\. Results will return here\./, { from: mark });
    await chat.waitFor(/── Background result: Review recent work \(completed\) ──/, { from: mark });
    await chat.waitFor(/REVIEW-FINDING: the retry delay is never reset\./, { from: mark });
    await chat.waitFor(/Acknowledged: I will reset the delay\./, { from: mark });

    mark = chat.screen().length;
    chat.write('count slowly\r');
    await chat.waitFor(/alp/, { from: mark });
    chat.write('\u0003');
    await chat.waitFor(/\(interrupted\)/, { from: mark });
    expect(chat.screen().slice(mark)).not.toContain('theta');

    // The chat goes on after an interrupt.
    mark = chat.screen().length;
    chat.write('are you there?\r');
    await chat.waitFor(/still here/, { from: mark });

    chat.write('\u0004');
    const exit = await chat.exited;
    expect(exit.code).toBe(0);

    // Everything happened in one session: the review result re-entered it.
    const sessions = parseJson<{ sessions: { id: string }[] }>(
      await runCli(['sessions', 'list', '--json'], { env }),
    );
    expect(sessions.sessions).toHaveLength(1);
    const shown = parseJson<{ messages: { role: string; content: string | null }[] }>(
      await runCli(['sessions', 'show', sessions.sessions[0]?.id ?? '', '--json'], { env }),
    );
    const users = shown.messages
      .filter((message) => message.role === 'user')
      .map((message) => message.content ?? '');
    expect(users[0]).toBe('Add retries to the uploader');
    expect(users[1]).toMatch(/^\[ASYNC DELEGATION BATCH COMPLETE — /);
    expect(users[2]).toBe('count slowly');
  });

  it('passes /steer guidance to the running answer with its next tool result, and queues typed lines', async () => {
    const { env, home, userHome } = await testHome();
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${userHome}/notes.txt`, 'meeting on Tuesday\n');
    const model = await startModelServer({
      script: [
        // The first reply is slow to start: time to type while the answer runs.
        { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }], delayMs: 2500 },
        { text: 'The meeting is on Tuesday.' },
        { text: 'queued answer' },
      ],
    });
    await writeModelConfig(home, model.baseUrl);
    const chat = spawnInPty(['chat'], env, userHome);
    await chat.waitFor(/\/help for commands/);
    chat.write('when is the meeting?\r');
    await chat.waitFor(/when is the meeting\?/);
    chat.write('/steer answer with the weekday only\r');
    await chat.waitFor(/Noted: the agent reads it with its next tool result\./);
    chat.write('and where?\r');
    await chat.waitFor(/queued: sent when the answer ends/);
    await chat.waitFor(/The meeting is on Tuesday\./);
    await chat.waitFor(/queued answer/);
    const toolResult = JSON.stringify(model.modelRequests[1]?.body);
    expect(toolResult).toContain('meeting on Tuesday');
    expect(toolResult).toContain('answer with the weekday only');
    const requests = model.modelRequests[2]?.body as {
      messages?: { role: string; content: string }[];
    };
    const lastUser = (requests?.messages ?? []).filter((message) => message.role === 'user').at(-1);
    expect(lastUser?.content).toBe('and where?');
    chat.write('/quit\r');
    expect((await chat.exited).code).toBe(0);
  });

  it('runs a review cut off by closing the chat again, and delivers its findings when the conversation is opened again', async () => {
    const { env, home } = await testHome();
    const model = await startModelServer({
      script: [
        { text: 'The plan: migrate in two steps.' },
        // The reviewer is slow: the chat is closed while it works.
        { text: 'REVIEW: too late', delayMs: 8000 },
        // The next chat runs the review again …
        { text: 'REVIEW: split the migration into smaller steps.' },
        // … and its findings re-enter the conversation.
        { text: 'Noted the review.' },
      ],
    });
    await writeModelConfig(home, model.baseUrl);
    const first = spawnInPty(['chat'], env);
    await first.waitFor(/\/help for commands/);
    first.write('plan the migration\r');
    await first.waitFor(/migrate in two steps/);
    first.write('/review\r');
    await first.waitFor(/Review started\./);
    first.write('\u0004');
    await first.waitFor(
      /background result still pending: running agents stop now \(a review starts over/,
    );
    expect((await first.exited).code).toBe(0);

    const second = spawnInPty(['chat', '--continue'], env);
    // The reviewer stopped with the first chat; the second ran it again and shows its findings.
    await second.waitFor(
      /── Background result: Review recent work \(completed\) ──\nREVIEW: split the migration into smaller steps\./,
    );
    await second.waitFor(/Noted the review\./);
    second.write('\u0004');
    expect((await second.exited).code).toBe(0);
    const injected =
      (model.modelRequests[3]?.body as { messages?: { role: string; content: string }[] })
        ?.messages ?? [];
    expect(injected.filter((message) => message.role === 'user').at(-1)?.content).toMatch(
      /^\[ASYNC DELEGATION BATCH COMPLETE — /,
    );
    expect(injected.some((message) => message.content === 'plan the migration')).toBe(true);
  });

  it('asks before a dangerous command runs: deny keeps it from running, once lets it run', async () => {
    const { env, home, userHome } = await testHome();
    const { existsSync, mkdirSync } = await import('node:fs');
    mkdirSync(`${userHome}/junk/deep`, { recursive: true });
    const model = await startModelServer({
      script: [
        { toolCalls: [{ name: 'terminal', arguments: { command: 'rm -rf junk' } }] },
        { text: 'Understood, I left it.' },
        { toolCalls: [{ name: 'terminal', arguments: { command: 'rm -rf junk' } }] },
        { text: 'Removed.' },
      ],
    });
    await writeModelConfig(home, model.baseUrl);
    const chat = spawnInPty(['chat'], env, userHome);
    await chat.waitFor(/\/help for commands/);
    chat.write('clean up junk\r');
    await chat.waitFor(/terminal wants to run: rm -rf junk/);
    await chat.waitFor(/Allow\? \[o\]nce, \[s\]ession, \[d\]eny/);
    chat.write('d\r');
    await chat.waitFor(/Understood, I left it\./);
    expect(existsSync(`${userHome}/junk`)).toBe(true);
    expect(JSON.stringify(model.modelRequests[1]?.body)).toContain('Command denied');
    let mark = chat.screen().length;
    chat.write('really, clean it\r');
    await chat.waitFor(/Allow\?/, { from: mark });
    mark = chat.screen().length;
    chat.write('o\r');
    await chat.waitFor(/Removed\./, { from: mark });
    expect(existsSync(`${userHome}/junk`)).toBe(false);
    chat.write('\u0004');
    expect((await chat.exited).code).toBe(0);
  });

  it('opens the chat for a bare `hermes` on a terminal, and leaves on two Ctrl-C with exit 130', async () => {
    const { env } = await testHome();
    const chat = spawnInPty([], env);
    await chat.waitFor(/\/help for commands/);
    // No model configured: the banner says what to set.
    expect(chat.screen()).toContain('no model configured');
    chat.write('\u0003');
    await chat.waitFor(/Ctrl-C again or Ctrl-D to leave/);
    chat.write('\u0003');
    const exit = await chat.exited;
    expect(exit.code).toBe(EXIT.interrupted);
  });
});
