import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type HermesConfig, resolveConfig } from '@hermes/config';
import { openSessionStore, type SessionStore } from '@hermes/session-store';
import {
  type ModelServer,
  type ModelServerOptions,
  type SpawnedProcess,
  type SpawnProcessOptions,
  spawnProcess,
  startModelServer,
  tempHome,
} from '@hermes/testkit';
import { onTestFinished } from 'vitest';
import type { AgentEvent } from '../src/events.js';
import type { Agent, CreateAgentOptions } from '../src/loop/agent-types.js';
import { createAgent } from '../src/loop/create-agent.js';
import type { ToolContext } from '../src/tools/tool-context.js';

export interface AgentFixture {
  readonly home: string;
  readonly workdir: string;
  readonly model: ModelServer;
  readonly config: HermesConfig;
  readonly store: SessionStore;
  readonly events: AgentEvent[];
  readonly onEvent: (event: AgentEvent) => void;
  agent(options?: Partial<CreateAgentOptions>): Agent;
}

/** A temp home with a real state.db, a scripted model server and a config pointing at it. */
export async function agentFixture(
  options: { raw?: Record<string, unknown>; server?: ModelServerOptions } = {},
): Promise<AgentFixture> {
  const home = (await tempHome()).path;
  const workdir = path.join(home, 'work');
  await mkdir(workdir);
  const model = await startModelServer(options.server ?? {});
  onTestFinished(() => model.close());
  const rawModel = (options.raw?.model ?? {}) as Record<string, unknown>;
  const config = resolveConfig({
    ...options.raw,
    model: { base_url: model.baseUrl, default: 'test-model', ...rawModel },
  });
  const store = await openSessionStore({ path: path.join(home, 'state.db') });
  onTestFinished(() => store.close());
  const events: AgentEvent[] = [];
  return {
    home,
    workdir,
    model,
    config,
    store,
    events,
    onEvent: (event) => events.push(event),
    agent: (overrides = {}) =>
      createAgent({ config, store, home, cwd: workdir, secret: () => undefined, ...overrides }),
  };
}

/** A tool context over a real agent, for calling one tool directly. */
export async function toolContext(
  overrides: Partial<ToolContext> & { raw?: Record<string, unknown> } = {},
): Promise<ToolContext & { fixture: AgentFixture }> {
  const { raw, ...rest } = overrides;
  const fixture = await agentFixture(raw ? { raw } : {});
  const agent = fixture.agent();
  return {
    fixture,
    agent,
    sessionId: 'session-under-test',
    runId: 'run_test',
    toolCallId: 'call_test',
    home: fixture.home,
    cwd: fixture.workdir,
    config: fixture.config,
    store: fixture.store,
    signal: new AbortController().signal,
    depth: 0,
    platform: 'cli',
    emit: () => {},
    approve: async () => 'deny',
    secret: () => undefined,
    sessionState: new Map(),
    origin: { sessionKey: 'session-under-test' },
    ...rest,
  };
}

const testDir = path.dirname(fileURLToPath(import.meta.url));

/** Runs `test/fixtures/<name>` from source in a process of its own, with `args`. */
export function spawnFixture(
  name: string,
  args: readonly string[],
  options: Omit<SpawnProcessOptions, 'command' | 'args' | 'cwd'> = {},
): Promise<SpawnedProcess> {
  return spawnProcess({
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      '--conditions=@hermes/source',
      path.join(testDir, 'fixtures', name),
      ...args,
    ],
    cwd: path.join(testDir, '..'),
    ...options,
  });
}

/**
 * Runs an ES module script (`lines`, joined) from source in a process of its own, in the package
 * folder (so `./src/…` imports resolve), and resolves with its exit code and stdout once it exits
 * on its own. Killed when the test ends.
 */
export async function runSourceScript(
  lines: readonly string[],
): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@hermes/source',
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      lines.join('\n'),
    ],
    { cwd: path.join(testDir, '..'), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout };
}

/**
 * The store, with every call of `methods` recorded by name in `calls`, in order (a write is
 * one transaction, so counting writes counts commits).
 */
export function recordingCalls(
  store: SessionStore,
  methods: readonly (keyof SessionStore)[],
): { store: SessionStore; calls: string[] } {
  const calls: string[] = [];
  const recorded = new Set<PropertyKey>(methods);
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (recorded.has(property))
        return (...args: unknown[]) => {
          calls.push(String(property));
          return value.apply(target, args);
        };
      return value.bind(target);
    },
  });
  return { store: proxy, calls };
}

/** The contents of the messages of the `index`-th model request, after its system prompt. */
export function sentContents(model: ModelServer, index: number): unknown[] {
  const body = requestBodies(model)[index] as { messages: { content: unknown }[] };
  return body.messages.slice(1).map((message) => message.content);
}

/** Request bodies the model server received, as plain objects. */
export function requestBodies(model: ModelServer): Record<string, unknown>[] {
  return model.modelRequests.map((request) => request.body as Record<string, unknown>);
}

export async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
