import { getHermesHome } from '@hermes/config';
import { REVIEW_STARTED_NOTE } from '@hermes/review-engine';
import { tempHome } from '@hermes/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { Bridge } from '../bridge.js';
import { RPC_ERROR_CODES, RPC_ERROR_MESSAGES } from '../contract/error-codes.js';
import { currentUiSession, type UiSessionIdentity } from '../runtime/ui-scope.js';

const bridges: Bridge[] = [];
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((bridge) => bridge.close()));
});

function call(bridge: Bridge, method: string, params: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const connection = bridge.connect('stdio', (text) => {
      const message = JSON.parse(text) as Record<string, unknown>;
      if (message.id === 1) resolve(message);
    });
    void connection.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  });
}

describe('/review dispatch binding', () => {
  it('binds the UI session identity and the profile home during dispatch only', async () => {
    const home = (await tempHome()).path;
    const bridge = new Bridge({ home, log: () => {} });
    bridges.push(bridge);
    const seen: { identity: UiSessionIdentity | undefined; home: string; origin: unknown }[] = [];
    bridge.delegation = {
      rail: async () => ({
        async dispatch(request) {
          seen.push({
            identity: currentUiSession(),
            home: getHermesHome(),
            origin: request.origin,
          });
          return { delegationId: 'deleg_test', mode: 'background' };
        },
      }),
      list: async () => [],
      steer: async () => undefined,
      stop: async () => undefined,
    };
    const created = (await call(bridge, 'session.create', {})).result as {
      session_id: string;
      stored_session_id: string;
    };
    const store = await bridge.registry.launch.store();
    await store.appendMessage(created.stored_session_id, {
      role: 'user',
      content: 'Please add retries.',
    });
    await store.appendMessage(created.stored_session_id, {
      role: 'assistant',
      content: 'Added retries.',
    });

    const reply = await call(bridge, 'slash.exec', {
      session_id: created.session_id,
      command: '/review',
    });
    expect(reply.result).toEqual({ output: REVIEW_STARTED_NOTE });
    expect(seen).toHaveLength(1);
    const session = bridge.session(created.session_id);
    expect(seen[0]?.identity).toEqual({
      uiSessionId: created.session_id,
      sessionKey: session.conversationId,
      storedSessionId: created.stored_session_id,
      profile: 'custom',
      steerAuthority: { transport: 'bridge', sessionId: created.session_id },
    });
    expect(seen[0]?.home).toBe(bridge.registry.launch.home);
    expect(seen[0]?.origin).toMatchObject({
      originUiSessionId: created.session_id,
      originSessionId: created.stored_session_id,
    });
    // Gone afterwards: nothing else this process does is attributed to that session.
    expect(currentUiSession()).toBeUndefined();
    expect(getHermesHome()).not.toBe(bridge.registry.launch.home);
  });

  it('answers 4042 and says so in /review when a program embeds the bridge without a rail', async () => {
    const home = (await tempHome()).path;
    const bridge = new Bridge({ home, log: () => {} });
    bridges.push(bridge);
    bridge.delegation = undefined;
    const created = (await call(bridge, 'session.create', {})).result as {
      session_id: string;
      stored_session_id: string;
    };
    const store = await bridge.registry.launch.store();
    await store.appendMessage(created.stored_session_id, {
      role: 'user',
      content: 'Please add retries.',
    });
    const listed = await call(bridge, 'subagent.list', { session_id: created.session_id });
    expect(listed.error).toMatchObject({ code: RPC_ERROR_CODES.delegationUnavailable });
    const review = await call(bridge, 'slash.exec', {
      session_id: created.session_id,
      command: '/review',
    });
    expect(review.result).toEqual({ output: RPC_ERROR_MESSAGES.delegationUnavailable });
  });
});
