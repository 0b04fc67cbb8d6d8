import type { ProfileRuntime } from '@hermes/agent';
import type { Bridge } from '../bridge.js';
import type { MethodHandler, MethodTable } from '../rpc/connection.js';
import { botRelayMethods } from './bot-relay-methods.js';
import { profileMethods } from './profile-methods.js';
import { promptMethods } from './prompt-methods.js';
import { sessionMethods } from './session-methods.js';
import { slashMethods } from './slash-methods.js';
import { subagentMethods } from './subagent-methods.js';

/** The profile a request is for: its live session's, the one it names, else the launch profile. */
function profileOf(bridge: Bridge, params: unknown): ProfileRuntime {
  const fields = (params ?? {}) as { session_id?: unknown; profile?: unknown };
  if (typeof fields.session_id === 'string') {
    const session = bridge.sessions.get(fields.session_id);
    if (session) return session.runtime;
  }
  if (typeof fields.profile === 'string') {
    try {
      return bridge.profile(fields.profile);
    } catch {
      // An unknown profile: the handler answers 4003 itself.
    }
  }
  return bridge.registry.launch;
}

/**
 * Every method's handler; params arrive already validated against the contract. Each call runs
 * in its profile's scope (`withHomeScope`: home and secrets), so nothing a method does can read
 * another profile's config or keys.
 */
export function createMethodTable(
  bridge: Bridge,
  options: { botRelay: { turnWaitMs?: number; attemptTimeoutMs?: number } },
): MethodTable {
  const table = {
    ...sessionMethods(bridge),
    ...promptMethods(bridge),
    ...slashMethods(bridge),
    ...subagentMethods(bridge),
    ...profileMethods(bridge),
    ...botRelayMethods(bridge, options.botRelay),
  } as unknown as Record<keyof MethodTable, MethodHandler>;
  const scoped = {} as Record<keyof MethodTable, MethodHandler>;
  for (const [name, handler] of Object.entries(table) as [keyof MethodTable, MethodHandler][]) {
    scoped[name] = (params, context) =>
      profileOf(bridge, params).run(() => handler(params, context));
  }
  return scoped;
}
