import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { ProcessIdentity } from '@hermes/session-store';
import type { ModelServer, RecordedRequest, ScriptedReply, ScriptedTurn } from '@hermes/testkit';
import { onTestFinished } from 'vitest';
import {
  type AsyncDelegationRegistryOptions,
  createDelegationRegistry,
} from '../src/delegation/async-registry.js';
import { SUBAGENT_INTRO } from '../src/delegation/build-children.js';
import type { AsyncDelegationEvent } from '../src/delegation/completion-event.js';
import type { CreateAgentOptions } from '../src/loop/agent-types.js';
import { type AgentFixture, agentFixture } from './fixtures.js';

type Message = { role: string; content: unknown };

/** The messages of a recorded chat-completions request. */
export function messagesOf(request: RecordedRequest): Message[] {
  return ((request.body as { messages?: Message[] }).messages ?? []) as Message[];
}

export function systemOf(request: RecordedRequest): string {
  const first = messagesOf(request)[0];
  return typeof first?.content === 'string' ? first.content : '';
}

/** A request made by a subagent (its system prompt starts with the subagent intro). */
export function isChildRequest(request: RecordedRequest): boolean {
  return systemOf(request).startsWith(SUBAGENT_INTRO);
}

export type Turn =
  | ScriptedReply
  | ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>);

/**
 * Answers parent and child requests from separate scripts, whatever order they arrive in (children
 * run concurrently with the parent). An exhausted script answers a 500 naming the side.
 */
export function routeReplies(
  model: ModelServer,
  scripts: { parent?: Turn[]; child?: Turn[] },
  slots = 200,
): { parent: Turn[]; child: Turn[] } {
  const queues = { parent: [...(scripts.parent ?? [])], child: [...(scripts.child ?? [])] };
  const dispatcher: ScriptedTurn = async (request) => {
    const side = isChildRequest(request) ? 'child' : 'parent';
    const next = queues[side].shift();
    if (!next) return { error: { status: 500, message: `no scripted ${side} reply left` } };
    return typeof next === 'function' ? next(request) : next;
  };
  for (let index = 0; index < slots; index += 1) model.push(dispatcher);
  return queues;
}

/** A promise plus its resolver (a gate a scripted reply can wait on). */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

export interface DelegationFixture extends AgentFixture {
  readonly registry: ReturnType<typeof createDelegationRegistry>;
  readonly published: AsyncDelegationEvent[];
}

/** An agent fixture plus an async delegation registry over its store (closed after the test). */
export async function delegationFixture(
  options: {
    raw?: Record<string, unknown>;
    registry?: Partial<AsyncDelegationRegistryOptions>;
  } = {},
): Promise<DelegationFixture> {
  const fixture = await agentFixture(options.raw ? { raw: options.raw } : {});
  const published: AsyncDelegationEvent[] = [];
  const registry = createDelegationRegistry({
    store: fixture.store,
    home: fixture.home,
    ...options.registry,
    onEvent: (event) => {
      if (event.type === 'published') published.push(event.event);
      options.registry?.onEvent?.(event);
    },
  });
  onTestFinished(() => registry.close(2000));
  return { ...fixture, registry, published };
}

/** The fixture's agent with the registry attached (background delegation on). */
export function railAgent(fixture: DelegationFixture, overrides: Partial<CreateAgentOptions> = {}) {
  return fixture.agent({ delegations: fixture.registry, ...overrides });
}

/** The identity of a process that ran and is gone (a real pid with its real start time). */
export async function deadProcess(): Promise<ProcessIdentity> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  const pid = child.pid as number;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return { pid, startTicks };
}
