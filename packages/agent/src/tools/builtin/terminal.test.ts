import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isProcessRunning } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { toolContext, waitFor } from '../../../test/fixtures.js';
import { executeTool } from '../define-tool.js';
import { runCommand, terminalTool } from './terminal.js';

const never = new AbortController().signal;

/** Reads a pid a command wrote to a file (the grandchild left running in its group). */
async function pidFrom(file: string): Promise<number> {
  await waitFor(() => {
    try {
      // The file exists before the shell writes into it.
      return readFileSync(file, 'utf8').trim() !== '';
    } catch {
      return false;
    }
  });
  return Number((await readFile(file, 'utf8')).trim());
}

describe('runCommand', () => {
  it('returns the exit code and the combined output', async () => {
    const result = await runCommand({
      command: 'echo out; echo err >&2; exit 3',
      cwd: process.cwd(),
      timeoutMs: 10_000,
      maxOutputChars: 10_000,
      signal: never,
    });
    expect(result.exit_code).toBe(3);
    expect(result.output).toContain('out');
    expect(result.output).toContain('err');
  });

  it('kills the whole process group on timeout, grandchildren included', async () => {
    const context = await toolContext();
    const pidFile = path.join(context.cwd, 'grandchild.pid');
    const started = performance.now();
    const result = await runCommand({
      command: `sleep 60 & echo $! > ${pidFile}; sleep 60`,
      cwd: context.cwd,
      timeoutMs: 500,
      maxOutputChars: 10_000,
      signal: never,
    });
    expect(result.timed_out).toBe(true);
    expect(performance.now() - started).toBeLessThan(5000);
    const grandchild = await pidFrom(pidFile);
    await waitFor(() => !isProcessRunning(grandchild) && !isProcessRunning(result.pid));
    expect(isProcessRunning(grandchild)).toBe(false);
    expect(isProcessRunning(result.pid)).toBe(false);
  });

  it('kills the process tree when the turn is interrupted', async () => {
    const context = await toolContext();
    const pidFile = path.join(context.cwd, 'grandchild.pid');
    const controller = new AbortController();
    const running = runCommand({
      command: `bash -c 'sleep 60 & echo $! > ${pidFile}; wait'`,
      cwd: context.cwd,
      timeoutMs: 60_000,
      maxOutputChars: 10_000,
      signal: controller.signal,
    });
    const grandchild = await pidFrom(pidFile);
    expect(isProcessRunning(grandchild)).toBe(true);
    controller.abort();
    const result = await running;
    expect(result.interrupted).toBe(true);
    await waitFor(() => !isProcessRunning(grandchild));
    expect(isProcessRunning(grandchild)).toBe(false);
  });

  it('stops background jobs a finished command left in its group', async () => {
    const context = await toolContext();
    const pidFile = path.join(context.cwd, 'bg.pid');
    const result = await runCommand({
      command: `sleep 60 & echo $! > ${pidFile}; echo done`,
      cwd: context.cwd,
      timeoutMs: 10_000,
      maxOutputChars: 10_000,
      signal: never,
    });
    expect(result.exit_code).toBe(0);
    const background = await pidFrom(pidFile);
    await waitFor(() => !isProcessRunning(background));
  });

  it('keeps the head and the tail of long output, capped while it streams', async () => {
    const result = await runCommand({
      command: 'echo START; seq 1 200000; echo END',
      cwd: process.cwd(),
      timeoutMs: 20_000,
      maxOutputChars: 2000,
      signal: never,
    });
    expect(result.truncated).toBe(true);
    expect(result.output.startsWith('START')).toBe(true);
    expect(result.output.trimEnd().endsWith('END')).toBe(true);
    expect(result.output).toMatch(/characters of output omitted/);
    expect(result.output.length).toBeLessThan(2200);
  });

  it('runs with stdin closed, so a prompt cannot hang', async () => {
    const result = await runCommand({
      command: 'read -r line; echo "got:$line:$?"',
      cwd: process.cwd(),
      timeoutMs: 5000,
      maxOutputChars: 1000,
      signal: never,
    });
    expect(result.timed_out).toBeUndefined();
    expect(result.output).toContain('got::1');
  });
});

describe('terminal tool', () => {
  it('runs in the turn’s working directory with the configured timeout', async () => {
    const context = await toolContext({ raw: { terminal: { timeout: 1 } } });
    const outcome = await executeTool(
      terminalTool,
      JSON.stringify({ command: 'pwd; sleep 5' }),
      context,
    );
    const result = JSON.parse(outcome.content);
    expect(result.output.trim()).toBe(context.cwd);
    expect(result.timed_out).toBe(true);
  });

  it('denies a dangerous command when no surface can approve it', async () => {
    const context = await toolContext();
    const outcome = await executeTool(
      terminalTool,
      JSON.stringify({ command: 'rm -rf ./precious' }),
      context,
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/^Command denied: it needs approval \(recursive delete\)/);
  });

  it('runs a dangerous command once approved, and remembers a session approval', async () => {
    const asked: string[] = [];
    const context = await toolContext({
      approve: async (request) => {
        asked.push(request.command);
        return 'session';
      },
    });
    const first = await executeTool(
      terminalTool,
      JSON.stringify({ command: 'rm -rf ./a' }),
      context,
    );
    const second = await executeTool(
      terminalTool,
      JSON.stringify({ command: 'rm -r ./b' }),
      context,
    );
    expect([first.ok, second.ok]).toEqual([true, true]);
    expect(asked).toEqual(['rm -rf ./a']);
  });

  it('never asks when approvals.mode is off', async () => {
    const context = await toolContext({ raw: { approvals: { mode: 'off' } } });
    const outcome = await executeTool(
      terminalTool,
      JSON.stringify({ command: 'rm -rf ./x' }),
      context,
    );
    expect(outcome.ok).toBe(true);
  });

  it('denies when the surface does not answer within approvals.timeout', async () => {
    const context = await toolContext({ raw: { approvals: { timeout: 1 } } });
    const agent = context.fixture.agent({ approve: () => new Promise(() => {}) });
    const session = await agent.createSession();
    context.fixture.model.push(
      { toolCalls: [{ id: 'd1', name: 'terminal', arguments: { command: 'rm -rf ./keep' } }] },
      { text: 'ok' },
    );
    const started = performance.now();
    await agent.runTurn({ sessionId: session.id, message: 'clean up' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    const toolRow = context.fixture.store
      .getMessages(session.id)
      .find((row) => row.role === 'tool');
    expect(JSON.parse(toolRow?.content ?? '{}').error).toMatch(/^Command denied/);
  });
});
