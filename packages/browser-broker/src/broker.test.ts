import { describe, expect, it } from 'vitest';
import { BrowserControlBroker, type BrowserControlBrokerOptions } from './broker.js';
import {
  DEFERRED_CANCEL_FLUSH_FAILED_MESSAGE,
  FRAME_CANCEL,
  FRAME_COMMAND,
  MAX_DEFERRED_CANCELS,
} from './constants.js';
import {
  BrowserControllerConnectionError,
  ControllerCancelled,
  ControllerRejected,
  ControllerTimeout,
  ControllerUnavailable,
} from './errors.js';
import type { BrowserControlFrame, ControllerSend } from './frames.js';
import { type ControllerScope, type ControllerScopeInput, createScope } from './scope.js';

const identity = {
  principalId: 'principal:default:0123456789abcdef0123456789abcdef',
  profileId: 'default',
  sessionId: 'session-1',
  controllerId: 'controller-1',
  browserProfileId: 'chrome-default',
  transportFamily: 'local-api',
};

function scopeOf(overrides: ControllerScopeInput = {}): ControllerScope {
  return createScope({
    ...identity,
    capabilities: ['controller.noop', 'browser_snapshot', 'browser_evaluate'],
    ...overrides,
  });
}

const lane = {
  sessionId: identity.sessionId,
  principalId: identity.principalId,
  transportFamily: identity.transportFamily,
};

function recorder() {
  const frames: BrowserControlFrame[] = [];
  const send: ControllerSend = (frame) => {
    frames.push(frame);
  };
  const commands = () => frames.filter((frame) => frame.method === FRAME_COMMAND);
  const cancels = () => frames.filter((frame) => frame.method === FRAME_CANCEL);
  return { frames, send, commands, cancels };
}

function makeBroker(options: BrowserControlBrokerOptions = {}) {
  return new BrowserControlBroker({ developerMode: false, commandTimeoutSeconds: 5, ...options });
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

async function until(condition: () => boolean): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not reached in time');
    await sleep(2);
  }
}

function commandId(frame: BrowserControlFrame | undefined): string {
  return String(frame?.params.command_id);
}

async function settle(promise: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await promise };
  } catch (error) {
    return error;
  }
}

describe('BrowserControlBroker scopes are immutable data', () => {
  const plainScope = (capabilities: Set<string>): ControllerScope => ({
    ...identity,
    capabilities,
  });

  it('hands out scopes from select() and scopeForSession() that cannot be widened', async () => {
    const broker = makeBroker({ developerMode: true });
    await broker.attach(scopeOf({ capabilities: ['browser_snapshot'] }), recorder().send, {});
    for (const handed of [
      broker.select(scopeOf(), 'browser_snapshot'),
      broker.scopeForSession(lane),
    ]) {
      expect(handed).not.toBeNull();
      const capabilities = handed?.capabilities as Set<string>;
      expect(() => capabilities.add('browser_evaluate')).toThrow(TypeError);
      expect(() => Set.prototype.add.call(capabilities, 'browser_evaluate')).toThrow(TypeError);
    }
    expect(broker.select(scopeOf(), 'browser_evaluate')).toBeNull();
    await expect(
      broker.dispatch({ scope: scopeOf(), action: 'browser_evaluate' }),
    ).rejects.toBeInstanceOf(ControllerUnavailable);
  });

  it("copies a caller's mutable scope on attach, so changing it later changes nothing", async () => {
    const broker = makeBroker({ developerMode: true });
    const capabilities = new Set(['browser_snapshot']);
    const scope = plainScope(capabilities);
    await broker.attach(scope, recorder().send, {});
    capabilities.add('browser_evaluate');
    expect(broker.select(scope, 'browser_evaluate')).toBeNull();
    expect(broker.scopeForSession(lane)?.capabilities.has('browser_evaluate')).toBe(false);
  });

  it("copies a caller's mutable scope into the ticket it mints", () => {
    const broker = makeBroker();
    const capabilities = new Set(['browser_snapshot']);
    const ticket = broker.mintTicket(plainScope(capabilities));
    capabilities.add('browser_evaluate');
    const consumed = broker.consumeTicket(ticket.value);
    expect([...consumed.capabilities]).toEqual(['browser_snapshot']);
    expect(() => (consumed.capabilities as Set<string>).add('browser_evaluate')).toThrow(TypeError);
  });
});

describe('BrowserControlBroker selection', () => {
  it('selects only a connected controller with the exact identity and the capability', async () => {
    const broker = makeBroker();
    await broker.attach(scopeOf(), recorder().send, {});
    expect(broker.select(scopeOf(), 'browser_snapshot')).not.toBeNull();
    expect(broker.select(scopeOf(), 'browser_click')).toBeNull();
    for (const field of Object.keys(identity)) {
      expect(broker.select(scopeOf({ [field]: null }), 'browser_snapshot')).toBeNull();
      expect(broker.select(scopeOf({ [field]: 'other' }), 'browser_snapshot')).toBeNull();
    }
  });

  it('uses the controller current capabilities, not the caller copy', async () => {
    const broker = makeBroker();
    await broker.attach(scopeOf({ capabilities: ['controller.noop'] }), recorder().send, {});
    expect(
      broker.select(scopeOf({ capabilities: ['browser_snapshot'] }), 'browser_snapshot'),
    ).toBeNull();
  });

  it('refuses developer capabilities on a pinned-off broker and allows them pinned on', async () => {
    const off = makeBroker({ developerMode: false });
    const on = makeBroker({ developerMode: true });
    await off.attach(scopeOf(), recorder().send, {});
    await on.attach(scopeOf(), recorder().send, {});
    expect(off.select(scopeOf(), 'browser_evaluate')).toBeNull();
    await expect(off.dispatch({ scope: scopeOf(), action: 'browser_evaluate' })).rejects.toThrow(
      ControllerUnavailable,
    );
    expect(on.select(scopeOf(), 'browser_evaluate')).not.toBeNull();
  });

  it('revokes and restores developer capabilities live when the flag flips', async () => {
    let developerMode = true;
    const broker = new BrowserControlBroker({
      flags: () => ({ enabled: true, developerMode }),
    });
    await broker.attach(scopeOf(), recorder().send, {});
    expect(broker.select(scopeOf(), 'browser_evaluate')).not.toBeNull();
    developerMode = false;
    expect(broker.select(scopeOf(), 'browser_evaluate')).toBeNull();
    expect(broker.select(scopeOf(), 'browser_snapshot')).not.toBeNull();
    developerMode = true;
    expect(broker.select(scopeOf(), 'browser_evaluate')).not.toBeNull();
  });

  it('finds a session lane only with the exact principal and transport family', async () => {
    const broker = makeBroker();
    await broker.attach(scopeOf(), recorder().send, {});
    expect(broker.scopeForSession(lane)).not.toBeNull();
    expect(broker.scopeForSession({ ...lane, principalId: '' })).toBeNull();
    expect(broker.scopeForSession({ ...lane, principalId: 'principal:default:other' })).toBeNull();
    expect(broker.scopeForSession({ ...lane, transportFamily: 'remote-api' })).toBeNull();
    expect(broker.scopeForSession({ ...lane, transportFamily: null })).toBeNull();
    expect(
      broker.scopeForSession({ ...lane, sessionId: '', taskId: identity.sessionId }),
    ).not.toBeNull();
    expect(broker.laneRegistered({ ...lane, transportFamily: 'remote-api' })).toBe(false);
  });

  it('fails an ambiguous lane closed but still reports it registered', async () => {
    const broker = makeBroker();
    await broker.attach(scopeOf(), recorder().send, {});
    // Same session/principal/family, another profile: not the replacement lane, same lookup lane.
    await broker.attach(scopeOf({ profileId: 'work' }), recorder().send, {});
    expect(broker.scopeForSession(lane)).toBeNull();
    expect(broker.laneRegistered(lane)).toBe(true);
  });

  it('gates ownership on the very owner object and the connected flag', async () => {
    const broker = makeBroker();
    const owner = {};
    await broker.attach(scopeOf({ capabilities: [] }), recorder().send, owner);
    expect(broker.isOwner(scopeOf(), owner)).toBe(true);
    expect(broker.isOwner(scopeOf(), {})).toBe(false);
    await broker.disconnect(scopeOf(), owner);
    expect(broker.isOwner(scopeOf(), owner)).toBe(false);
  });
});

describe('BrowserControlBroker dispatch', () => {
  it('round-trips a no-op completed synchronously from inside send', async () => {
    const broker = makeBroker();
    const frames: BrowserControlFrame[] = [];
    await broker.attach(
      scopeOf(),
      (frame) => {
        frames.push(frame);
        broker.complete(commandId(frame), { ok: true, result: { pong: true } });
      },
      {},
    );
    const result = await broker.dispatch({
      scope: scopeOf(),
      action: 'controller.noop',
      arguments: { a: 1 },
      toolCallId: 'call-1',
    });
    expect(result).toEqual({ pong: true });
    expect(broker.pendingCount).toBe(0);
    expect(frames[0]?.params).toMatchObject({
      action: 'controller.noop',
      arguments: { a: 1 },
      controller_id: 'controller-1',
      browser_profile_id: 'chrome-default',
      tool_call_id: 'call-1',
    });
    expect(commandId(frames[0])).toMatch(/^[0-9a-f]{32}$/);
  });

  it('writes explicit nulls for unknown ids and never mutates the caller arguments', async () => {
    const broker = makeBroker();
    const wire = recorder();
    await broker.attach(scopeOf({ controllerId: null }), wire.send, {});
    const args = { include: 'accessibility' };
    const running = broker.dispatch({
      scope: scopeOf({ controllerId: null }),
      action: 'browser_snapshot',
      arguments: args,
    });
    await until(() => wire.commands().length === 1);
    const params = wire.commands()[0]?.params ?? {};
    expect(params.controller_id).toBeNull();
    expect(params.tool_call_id).toBeNull();
    expect(params.arguments).not.toBe(args);
    broker.complete(commandId(wire.commands()[0]), { ok: true, result: 'x' });
    await running;
    expect(args).toEqual({ include: 'accessibility' });
  });

  it('fails closed as rejected when ok is anything but literal true', async () => {
    const broker = makeBroker();
    await broker.attach(
      scopeOf(),
      (frame) => {
        broker.complete(commandId(frame), { ok: 'false', result: { code: 'boom' } });
      },
      {},
    );
    const error = await settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' }));
    expect(error).toBeInstanceOf(ControllerRejected);
    expect((error as ControllerRejected).payload).toEqual({ code: 'boom' });
    expect((error as Error).message).toContain('{"code":"boom"}');
  });

  it('releases the pending id and surfaces the transport error when send fails', async () => {
    const broker = makeBroker();
    const failure = new Error('socket exploded');
    await broker.attach(
      scopeOf(),
      () => {
        throw failure;
      },
      {},
    );
    await expect(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' })).rejects.toBe(
      failure,
    );
    expect(broker.pendingCount).toBe(0);
  });

  it('times out, marks the command terminal and emits one cancel frame', async () => {
    const broker = makeBroker({ commandTimeoutSeconds: 0.03 });
    const wire = recorder();
    await broker.attach(scopeOf(), wire.send, {});
    const error = await settle(
      broker.dispatch({ scope: scopeOf(), action: 'controller.noop', toolCallId: 'call-9' }),
    );
    expect(error).toBeInstanceOf(ControllerTimeout);
    expect(wire.cancels()).toHaveLength(1);
    expect(wire.cancels()[0]?.params).toEqual({
      command_id: commandId(wire.commands()[0]),
      tool_call_id: 'call-9',
    });
    expect(broker.complete(commandId(wire.commands()[0]), { ok: true })).toBe(false);
    expect(broker.pendingCount).toBe(0);
  });

  it('returns a completion that wins at the timeout boundary instead of a timeout', async () => {
    let completeAtBoundary = () => {};
    const broker = makeBroker({
      commandTimeoutSeconds: 0.02,
      // The deadline fires, but the completion lands in the same instant just before the check.
      scheduleDeadline: (milliseconds, onDeadline) => {
        setTimeout(() => {
          completeAtBoundary();
          onDeadline();
        }, milliseconds);
        return () => {};
      },
    });
    const wire = recorder();
    await broker.attach(scopeOf(), wire.send, {});
    completeAtBoundary = () => {
      broker.complete(commandId(wire.commands()[0]), { ok: true, result: 'just in time' });
    };
    // Keep the completion from waking the waiter early: complete() runs inside the deadline callback.
    await expect(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' })).resolves.toBe(
      'just in time',
    );
    expect(wire.cancels()).toHaveLength(0);
  });

  it('re-validates after taking the send lock: a detach that won the race makes it unavailable', async () => {
    const broker = makeBroker();
    const frames: BrowserControlFrame[] = [];
    let releaseFirstSend = () => {};
    const firstSendBlocked = new Promise<void>((resolve) => {
      releaseFirstSend = resolve;
    });
    await broker.attach(
      scopeOf(),
      async (frame) => {
        frames.push(frame);
        if (frames.length === 1) await firstSendBlocked;
      },
      {},
    );
    const first = settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' }));
    await until(() => frames.length === 1);
    const detaching = broker.detach(scopeOf(), { notifyController: false });
    const second = settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' }));
    releaseFirstSend();
    await detaching;
    const secondOutcome = await second;
    expect(secondOutcome).toBeInstanceOf(ControllerUnavailable);
    expect((secondOutcome as Error).message).toContain('detached before dispatch');
    expect(await first).toBeInstanceOf(ControllerCancelled);
    expect(broker.pendingCount).toBe(0);
  });

  it('keeps the command pending when the send resolved but the result comes later', async () => {
    const broker = makeBroker();
    const wire = recorder();
    await broker.attach(scopeOf(), wire.send, {});
    const running = broker.dispatch({ scope: scopeOf(), action: 'controller.noop' });
    await until(() => wire.commands().length === 1);
    expect(broker.pendingCount).toBe(1);
    expect(broker.complete(commandId(wire.commands()[0]), { ok: true, result: 42 })).toBe(true);
    expect(broker.complete(commandId(wire.commands()[0]), { ok: true, result: 43 })).toBe(false);
    await expect(running).resolves.toBe(42);
  });

  it('refuses a completion whose scope is not the command scope', async () => {
    const broker = makeBroker();
    const wire = recorder();
    await broker.attach(scopeOf(), wire.send, {});
    const running = broker.dispatch({ scope: scopeOf(), action: 'controller.noop' });
    await until(() => wire.commands().length === 1);
    const id = commandId(wire.commands()[0]);
    expect(broker.complete(id, { ok: true, scope: scopeOf({ sessionId: 'other' }) })).toBe(false);
    expect(broker.complete(id, { ok: true, scope: scopeOf({ capabilities: ['x'] }) })).toBe(false);
    expect(broker.complete(id, { ok: true, result: 'mine', scope: scopeOf() })).toBe(true);
    await expect(running).resolves.toBe('mine');
  });
});

describe('BrowserControlBroker cancel and detach', () => {
  it('cancels only the command with the matching tool call id, with exactly one cancel frame', async () => {
    const broker = makeBroker();
    const wire = recorder();
    await broker.attach(scopeOf(), wire.send, {});
    const keep = broker.dispatch({
      scope: scopeOf(),
      action: 'controller.noop',
      toolCallId: 'keep',
    });
    const drop = settle(
      broker.dispatch({ scope: scopeOf(), action: 'controller.noop', toolCallId: 'drop' }),
    );
    await until(() => wire.commands().length === 2);
    expect(await broker.cancel(scopeOf(), 'drop')).toBe(true);
    expect(await drop).toBeInstanceOf(ControllerCancelled);
    expect(wire.cancels()).toHaveLength(1);
    expect(wire.cancels()[0]?.params.tool_call_id).toBe('drop');
    expect(await broker.cancel(scopeOf(), 'nothing')).toBe(false);
    broker.complete(commandId(wire.commands()[0]), { ok: true, result: 'kept' });
    await expect(keep).resolves.toBe('kept');
  });

  it('detach fails pending work closed, refuses late completions and writes the cancel after the command', async () => {
    const broker = makeBroker();
    const wire = recorder();
    await broker.attach(scopeOf(), wire.send, {});
    const running = settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' }));
    await until(() => wire.commands().length === 1);
    expect(await broker.detach(scopeOf())).toBe(true);
    expect(await running).toBeInstanceOf(ControllerCancelled);
    expect(broker.complete(commandId(wire.commands()[0]), { ok: true })).toBe(false);
    expect(wire.frames.map((frame) => frame.method)).toEqual([FRAME_COMMAND, FRAME_CANCEL]);
    expect(broker.select(scopeOf(), 'controller.noop')).toBeNull();
    expect(broker.laneRegistered(lane)).toBe(false);
  });

  it('fails waiters closed without writing to the closing peer when notify is off', async () => {
    const broker = makeBroker();
    const wire = recorder();
    const owner = {};
    await broker.attach(scopeOf(), wire.send, owner);
    const running = settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' }));
    await until(() => wire.commands().length === 1);
    expect(await broker.detachOwner(owner, { notifyController: false })).toBe(1);
    expect(await running).toBeInstanceOf(ControllerCancelled);
    expect(wire.cancels()).toHaveLength(0);
  });

  it('reset detaches everything and forgets tickets', async () => {
    const broker = makeBroker();
    const wire = recorder();
    await broker.attach(scopeOf(), wire.send, {});
    const ticket = broker.mintTicket(scopeOf());
    const running = settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' }));
    await until(() => wire.commands().length === 1);
    await broker.reset();
    expect(await running).toBeInstanceOf(ControllerCancelled);
    expect(wire.cancels()).toHaveLength(1);
    expect(() => broker.consumeTicket(ticket.value)).toThrow('unknown ticket');
    expect(broker.laneRegistered(lane)).toBe(false);
    expect(broker.pendingCount).toBe(0);
  });
});

describe('BrowserControlBroker reconnect and replacement', () => {
  it('completes pending work through a same-identity reattach without new frames to the new sender', async () => {
    const broker = makeBroker();
    const first = recorder();
    const second = recorder();
    await broker.attach(scopeOf(), first.send, {});
    const running = broker.dispatch({ scope: scopeOf(), action: 'controller.noop' });
    await until(() => first.commands().length === 1);
    await broker.attach(scopeOf(), second.send, {});
    expect(second.frames).toHaveLength(0);
    expect(
      broker.complete(commandId(first.commands()[0]), {
        ok: true,
        result: 'done',
        scope: scopeOf(),
      }),
    ).toBe(true);
    await expect(running).resolves.toBe('done');
  });

  it('renegotiates capabilities on reattach and refuses the stale scope for completion', async () => {
    const broker = makeBroker();
    const first = recorder();
    await broker.attach(scopeOf(), first.send, {});
    const running = broker.dispatch({ scope: scopeOf(), action: 'controller.noop' });
    await until(() => first.commands().length === 1);
    const refreshed = scopeOf({ capabilities: ['controller.noop', 'browser_click'] });
    await broker.attach(refreshed, recorder().send, {});
    expect(broker.scopeForSession(lane)?.capabilities.has('browser_click')).toBe(true);
    expect(broker.select(scopeOf(), 'browser_snapshot')).toBeNull();
    const id = commandId(first.commands()[0]);
    expect(broker.complete(id, { ok: true, result: 'stale', scope: scopeOf() })).toBe(false);
    expect(broker.complete(id, { ok: true, result: 'fresh', scope: refreshed })).toBe(true);
    await expect(running).resolves.toBe('fresh');
  });

  it('parks pending work on disconnect, refuses new work offline and completes after reconnect', async () => {
    const broker = makeBroker();
    const first = recorder();
    const owner = {};
    await broker.attach(scopeOf(), first.send, owner);
    const running = broker.dispatch({ scope: scopeOf(), action: 'controller.noop' });
    await until(() => first.commands().length === 1);
    expect(await broker.disconnect(scopeOf(), owner)).toBe(true);
    await expect(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' })).rejects.toThrow(
      ControllerUnavailable,
    );
    expect(broker.laneRegistered(lane)).toBe(true);
    await broker.attach(scopeOf(), recorder().send, {});
    broker.complete(commandId(first.commands()[0]), { ok: true, result: { reconnected: true } });
    await expect(running).resolves.toEqual({ reconnected: true });
  });

  it('lets a stale owner neither disconnect nor detach the refreshed generation', async () => {
    const broker = makeBroker();
    const oldOwner = {};
    const newOwner = {};
    await broker.attach(scopeOf(), recorder().send, oldOwner);
    await broker.attach(scopeOf(), recorder().send, newOwner);
    expect(await broker.disconnect(scopeOf(), oldOwner)).toBe(false);
    expect(await broker.detach(scopeOf(), { owner: oldOwner })).toBe(false);
    expect(await broker.disconnectOwner(oldOwner)).toBe(0);
    expect(broker.isOwner(scopeOf(), newOwner)).toBe(true);
  });

  it('defers the cancel of a command that timed out offline and flushes it first on reattach', async () => {
    const broker = makeBroker({ commandTimeoutSeconds: 0.03 });
    const first = recorder();
    await broker.attach(scopeOf(), first.send, {});
    const running = settle(
      broker.dispatch({ scope: scopeOf(), action: 'controller.noop', toolCallId: 't1' }),
    );
    await until(() => first.commands().length === 1);
    await broker.disconnect(scopeOf());
    expect(await running).toBeInstanceOf(ControllerTimeout);
    expect(first.cancels()).toHaveLength(0);

    const second = recorder();
    await broker.attach(scopeOf(), second.send, {});
    expect(second.frames).toEqual([
      {
        method: FRAME_CANCEL,
        params: { command_id: commandId(first.commands()[0]), tool_call_id: 't1' },
      },
    ]);
    const next = broker.dispatch({ scope: scopeOf(), action: 'controller.noop' });
    await until(() => second.commands().length === 1);
    broker.complete(commandId(second.commands()[0]), { ok: true, result: 'after' });
    await expect(next).resolves.toBe('after');
  });

  it('admits no new command until every deferred cancel is flushed, in order', async () => {
    const broker = makeBroker({ commandTimeoutSeconds: 0.03 });
    const first = recorder();
    await broker.attach(scopeOf(), first.send, {});
    const timedOut = [
      settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop', toolCallId: 'a' })),
      settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop', toolCallId: 'b' })),
    ];
    await until(() => first.commands().length === 2);
    await broker.disconnect(scopeOf());
    await Promise.all(timedOut);

    const seen: BrowserControlFrame[] = [];
    const slowSend: ControllerSend = async (frame) => {
      await sleep(15);
      seen.push(frame);
    };
    const attaching = broker.attach(scopeOf(), slowSend, {});
    await sleep(5);
    await expect(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' })).rejects.toThrow(
      ControllerUnavailable,
    );
    await attaching;
    const next = broker.dispatch({ scope: scopeOf(), action: 'controller.noop' });
    await until(() => seen.length === 3);
    expect(seen.map((frame) => frame.params.tool_call_id ?? null)).toEqual(['a', 'b', null]);
    expect(seen.map((frame) => frame.method)).toEqual([FRAME_CANCEL, FRAME_CANCEL, FRAME_COMMAND]);
    broker.complete(commandId(seen[2]), { ok: true });
    await next;
  });

  it('keeps the controller offline with the unsent tail when the flush fails, and retries next attach', async () => {
    const broker = makeBroker({ commandTimeoutSeconds: 0.03 });
    await broker.attach(scopeOf(), recorder().send, {});
    const timedOut = [
      settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop', toolCallId: 'a' })),
      settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop', toolCallId: 'b' })),
    ];
    await sleep(5);
    await broker.disconnect(scopeOf());
    await Promise.all(timedOut);

    let sends = 0;
    const failing: ControllerSend = () => {
      sends += 1;
      if (sends === 2) throw new Error('write failed');
    };
    const error = await settle(broker.attach(scopeOf(), failing, {}));
    expect(BrowserControllerConnectionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(DEFERRED_CANCEL_FLUSH_FAILED_MESSAGE);
    expect(broker.select(scopeOf(), 'controller.noop')).toBeNull();

    const retry = recorder();
    await broker.attach(scopeOf(), retry.send, {});
    expect(retry.frames.map((frame) => frame.params.tool_call_id)).toEqual(['b']);
    expect(broker.select(scopeOf(), 'controller.noop')).not.toBeNull();
  });

  it('keeps only the newest deferred cancels beyond the cap', async () => {
    const broker = makeBroker({ commandTimeoutSeconds: 0.05 });
    const first = recorder();
    await broker.attach(scopeOf(), first.send, {});
    const total = MAX_DEFERRED_CANCELS + 3;
    const running = Array.from({ length: total }, (_, index) =>
      settle(
        broker.dispatch({ scope: scopeOf(), action: 'controller.noop', toolCallId: `t${index}` }),
      ),
    );
    await until(() => first.commands().length === total);
    await broker.disconnect(scopeOf());
    await Promise.all(running);
    const second = recorder();
    await broker.attach(scopeOf(), second.send, {});
    expect(second.cancels()).toHaveLength(MAX_DEFERRED_CANCELS);
    expect(second.cancels()[0]?.params.tool_call_id).toBe('t3');
  });

  it('cancels with a pre-reconnect scope and writes the frame to the refreshed sender', async () => {
    const broker = makeBroker();
    const first = recorder();
    await broker.attach(scopeOf(), first.send, {});
    const running = settle(
      broker.dispatch({ scope: scopeOf(), action: 'controller.noop', toolCallId: 'x' }),
    );
    await until(() => first.commands().length === 1);
    const second = recorder();
    await broker.attach(scopeOf({ capabilities: ['controller.noop'] }), second.send, {});
    expect(await broker.cancel(scopeOf(), 'x')).toBe(true);
    expect(await running).toBeInstanceOf(ControllerCancelled);
    expect(first.cancels()).toHaveLength(0);
    expect(second.cancels()).toHaveLength(1);
  });

  it('hard-replaces another identity in the lane, cancelling its work without notifying it', async () => {
    for (const parkedFirst of [false, true]) {
      const broker = makeBroker();
      const old = recorder();
      await broker.attach(scopeOf(), old.send, {});
      const running = settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' }));
      await until(() => old.commands().length === 1);
      if (parkedFirst) await broker.disconnect(scopeOf());
      const replacement = scopeOf({ controllerId: 'controller-2' });
      await broker.attach(replacement, recorder().send, {});
      expect(await running).toBeInstanceOf(ControllerCancelled);
      expect(old.cancels()).toHaveLength(0);
      expect(broker.scopeForSession(lane)?.controllerId).toBe('controller-2');
      expect(broker.select(scopeOf(), 'controller.noop')).toBeNull();
    }
  });

  it('scopes lane replacement and owner detach to their own lane', async () => {
    const broker = makeBroker();
    const owner = {};
    const otherSession = scopeOf({ sessionId: 'session-2' });
    await broker.attach(scopeOf(), recorder().send, owner);
    await broker.attach(otherSession, recorder().send, {});
    await broker.attach(scopeOf({ controllerId: 'controller-2' }), recorder().send, owner);
    expect(broker.select(otherSession, 'controller.noop')).not.toBeNull();
    expect(await broker.detachOwner(owner)).toBe(1);
    expect(broker.select(otherSession, 'controller.noop')).not.toBeNull();
    expect(broker.laneRegistered(lane)).toBe(false);
  });
});

describe('BrowserControlBroker turn target', () => {
  it('adds tab and frame only for the controller the session target names', async () => {
    const broker = makeBroker();
    const wire = recorder();
    await broker.attach(scopeOf(), wire.send, {});
    broker.setTurnTarget(identity.sessionId, {
      controllerId: 'controller-1',
      tabId: 4,
      frameId: 0,
    });
    void settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' }));
    broker.setTurnTarget(identity.sessionId, {
      controllerId: 'someone-else',
      tabId: 4,
      frameId: 0,
    });
    void settle(broker.dispatch({ scope: scopeOf(), action: 'controller.noop' }));
    await until(() => wire.commands().length === 2);
    expect(wire.commands()[0]?.params).toMatchObject({ tab_id: 4, frame_id: 0 });
    expect(wire.commands()[1]?.params).not.toHaveProperty('tab_id');
    await broker.reset();
  });
});
