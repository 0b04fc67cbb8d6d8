import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type HermesConfig, resolveConfig } from '@hermes/config';
import { openSessionStore, type SessionStore } from '@hermes/session-store';
import {
  type ModelServer,
  type ModelServerOptions,
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
