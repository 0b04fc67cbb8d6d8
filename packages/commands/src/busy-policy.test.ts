import { describe, expect, it } from 'vitest';
import {
  ACTIVE_SESSION_BYPASS_COMMANDS,
  isInterruptThenDispatch,
  shouldBypassActiveSession,
} from './busy-policy.js';
import { COMMAND_REGISTRY } from './registry.js';

describe('busy policy helpers', () => {
  it('let every resolvable command bypass the pending-message queue, and nothing else', () => {
    for (const command of COMMAND_REGISTRY)
      for (const name of [command.name, ...command.aliases, `/${command.name.toUpperCase()}`])
        expect(shouldBypassActiveSession(name), name).toBe(true);
    expect(shouldBypassActiveSession('hello')).toBe(false);
    expect(shouldBypassActiveSession('/not-a-command')).toBe(false);
  });

  it('interrupt the running turn for /new, /reset and /stop only', () => {
    const interrupting = COMMAND_REGISTRY.flatMap((command) => [
      command.name,
      ...command.aliases,
    ]).filter(isInterruptThenDispatch);
    expect(interrupting.sort()).toEqual(['new', 'reset', 'stop']);
  });

  it('answer false, never throw, for a name that is no command', () => {
    for (const name of ['frobnicate', '', '/', 'hello world'])
      expect(isInterruptThenDispatch(name), name).toBe(false);
  });

  it('list as bypass commands exactly those whose policy is not reject', () => {
    expect(ACTIVE_SESSION_BYPASS_COMMANDS.has('queue')).toBe(true);
    expect(ACTIVE_SESSION_BYPASS_COMMANDS.has('stop')).toBe(true);
    expect(ACTIVE_SESSION_BYPASS_COMMANDS.has('review')).toBe(false);
    expect(ACTIVE_SESSION_BYPASS_COMMANDS.size).toBe(
      COMMAND_REGISTRY.filter((command) => command.busyPolicy !== 'reject').length,
    );
  });
});
