import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TOOL_ERROR_MESSAGES } from '../src/errors.js';
import { agentFixture, requestBodies, spawnFixture, waitFor } from './fixtures.js';

describe('a process killed mid-turn', () => {
  it('leaves a transcript another process resumes, taking over the dead turn lease', async () => {
    const fixture = await agentFixture({
      server: {
        script: [
          {
            toolCalls: [
              {
                id: 'job',
                name: 'terminal',
                arguments: { command: 'echo $$ > job.pid; sleep 30' },
              },
            ],
          },
          { text: 'Resumed after the crash.' },
        ],
      },
    });
    const session = await fixture.store.createSession({ source: 'cli' });
    const child = await spawnFixture(
      'crash-turn.ts',
      [fixture.home, fixture.model.baseUrl, session.id, fixture.workdir],
      { readyLine: 'TOOL_STARTED', readyTimeoutMs: 20_000 },
    );
    const pidFile = path.join(fixture.workdir, 'job.pid');
    await waitFor(() => {
      try {
        return readFileSync(pidFile, 'utf8').trim() !== '';
      } catch {
        return false;
      }
    });
    // The terminal command runs in its own process group, which a SIGKILL of the agent cannot
    // clean up; the test does.
    const jobGroup = Number(readFileSync(pidFile, 'utf8').trim());
    onTestFinished(() => {
      try {
        process.kill(-jobGroup, 'SIGKILL');
      } catch {}
    });

    child.child.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');
    expect(child.stdout()).not.toContain('TURN_FINISHED');

    const rows = fixture.store.getMessages(session.id);
    expect(rows.map((row) => row.role)).toEqual(['user', 'assistant']);
    expect(fixture.store.getTurnLease(session.id)?.active).toBe(false);

    const result = await fixture
      .agent()
      .runTurn({ sessionId: session.id, message: 'what happened?' });
    expect(result).toMatchObject({
      status: 'completed',
      finalResponse: 'Resumed after the crash.',
    });
    const body = requestBodies(fixture.model)[1] as {
      messages: { role: string; content: unknown }[];
    };
    expect(body.messages.slice(1)).toEqual([
      { role: 'user', content: 'start the long job' },
      expect.objectContaining({ role: 'assistant', content: null }),
      {
        role: 'tool',
        tool_call_id: 'job',
        content: JSON.stringify({ error: TOOL_ERROR_MESSAGES.noResultRecorded }),
      },
      { role: 'user', content: 'what happened?' },
    ]);
  });
});
