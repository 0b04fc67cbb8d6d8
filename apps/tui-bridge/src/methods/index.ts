import type { Bridge } from '../bridge.js';
import type { MethodHandler, MethodTable } from '../rpc/connection.js';
import { botRelayMethods } from './bot-relay-methods.js';
import { profileMethods } from './profile-methods.js';
import { promptMethods } from './prompt-methods.js';
import { sessionMethods } from './session-methods.js';
import { slashMethods } from './slash-methods.js';
import { subagentMethods } from './subagent-methods.js';

/** Every method's handler; params arrive already validated against the contract. */
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
  };
  return table as unknown as { [K in keyof MethodTable]: MethodHandler };
}
