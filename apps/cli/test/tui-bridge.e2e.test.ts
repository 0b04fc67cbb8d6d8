import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { startModelServer } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI_BIN, runCli, testHome, writeModelConfig } from './helpers.js';

/** One line of the bridge's stdout: a reply or an event. */
interface Message {
  readonly id?: number;
  readonly result?: Record<string, unknown>;
  readonly error?: unknown;
  readonly params?: { readonly type: string; readonly payload: Record<string, unknown> };
}

/** `hermes <args>` with pipes, read one JSON-RPC line at a time. */
function startBridge(args: readonly string[], env: NodeJS.ProcessEnv) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI_BIN, ...args], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: Message[] = [];
  const waiters = new Set<() => void>();
  let stdout = '';
  let stderr = '';
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    buffer += chunk;
    for (let index = buffer.indexOf('\n'); index !== -1; index = buffer.indexOf('\n')) {
      const line = buffer.slice(0, index);
      buffer = buffer.slice(index + 1);
      // Every line on stdout is protocol: one that does not parse fails the test.
      if (line.trim() !== '') messages.push(JSON.parse(line) as Message);
    }
    for (const wake of waiters) wake();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const waitFor = (predicate: (message: Message) => boolean, timeoutMs = 20_000) =>
    new Promise<Message>((resolve, reject) => {
      const check = () => {
        const found = messages.find(predicate);
        if (!found) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`not seen in time; stdout:\n${stdout}\nstderr:\n${stderr}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  let nextId = 1;
  const request = async (
    method: string,
    params: unknown = {},
  ): Promise<Record<string, unknown>> => {
    const id = nextId++;
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    const reply = await waitFor((message) => message.id === id);
    if (reply.error) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
    return reply.result ?? {};
  };
  return { child, messages, waitFor, request, exited, stderr: () => stderr };
}

describe('hermes tui-bridge', () => {
  it('serves the bridge protocol over stdio for the -p profile: a full turn, stored there, and exit 0 when the front end closes', async () => {
    const { env, home } = await testHome();
    const work = path.join(home, 'profiles', 'work');
    await mkdir(work, { recursive: true });
    const model = await startModelServer({ script: [{ text: 'Hello from the bridge.' }] });
    onTestFinished(() => model.close());
    await writeModelConfig(work, model.baseUrl);

    const bridge = startBridge(['-p', 'work', 'tui-bridge'], env);
    const ready = await bridge.waitFor((message) => message.params?.type === 'gateway.ready');
    expect(ready.params?.payload).toMatchObject({ profile: 'work', transport: 'stdio' });

    const created = await bridge.request('session.create', { title: 'From the CLI' });
    expect(created.profile).toBe('work');
    const { run_id } = await bridge.request('prompt.submit', {
      session_id: created.session_id,
      text: 'Say hello.',
    });
    const completed = await bridge.waitFor(
      (message) =>
        message.params?.type === 'run.completed' && message.params.payload.run_id === run_id,
    );
    expect(completed.params?.payload).toMatchObject({
      status: 'completed',
      final_response: 'Hello from the bridge.',
    });

    bridge.child.stdin.end();
    expect(await bridge.exited).toEqual({ code: 0, signal: null });
    const store = await openSessionStore({ path: path.join(work, 'state.db') });
    try {
      const stored = String(created.stored_session_id);
      const row = store.getSession(stored);
      expect(row).toMatchObject({ title: 'From the CLI', source: 'tui' });
      expect(store.getMessages(stored).map((message) => message.content)).toEqual([
        'Say hello.',
        'Hello from the bridge.',
      ]);
    } finally {
      await store.close();
    }
  });

  it('stops cleanly on SIGTERM with exit 0', async () => {
    const { env } = await testHome();
    const bridge = startBridge(['tui-bridge'], env);
    await bridge.waitFor((message) => message.params?.type === 'gateway.ready');
    bridge.child.kill('SIGTERM');
    expect(await bridge.exited).toEqual({ code: 0, signal: null });
  });

  it('serves a WebSocket with --port, named as hermes tui-bridge', async () => {
    const { env } = await testHome();
    const child = spawn(
      process.execPath,
      [CLI_BIN, 'tui-bridge', '--port', '0', '--token', 'a-test-token-0123456789abcdef'],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('\n')) resolve(out);
      });
      child.once('close', () => reject(new Error(`exited before listening: ${out}`)));
    });
    expect(line).toMatch(/^hermes tui-bridge listening on ws:\/\/127\.0\.0\.1:\d+\/\n$/);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('rejects a bad option as every hermes command does: exit 2, a hint, no protocol on stdout', async () => {
    const { env } = await testHome();
    const result = await runCli(['tui-bridge', '--port', 'nope'], { env });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("option '--port <port>' argument 'nope' is invalid");
    expect(result.stderr).toContain('(run hermes tui-bridge --help for usage)');
    // Not the bridge's whole help (with its own -V and -p) in place of an error.
    expect(result.stderr).not.toContain('Usage:');
    expect(result.stderr).not.toContain('--version');
    // The same profile rules through the bridge's own -p as through hermes -p.
    expect((await runCli(['tui-bridge', '-p', 'ghost'], { env })).code).toBe(1);
    expect((await runCli(['tui-bridge', '-p', '../etc'], { env })).code).toBe(2);
  });

  it('exits 1 for an unknown profile and 2 for a malformed one or a non-loopback host without a token', async () => {
    const { env } = await testHome();
    const unknown = await runCli(['-p', 'ghost', 'tui-bridge'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('hermes profile create ghost');
    expect((await runCli(['-p', '../etc', 'tui-bridge'], { env })).code).toBe(2);
    const open = await runCli(['tui-bridge', '--host', '0.0.0.0', '--port', '0'], { env });
    expect(open.code).toBe(2);
    expect(open.stderr).toContain('pass --token');
  });
});
