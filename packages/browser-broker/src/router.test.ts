import { describe, expect, it } from 'vitest';
import { BrowserControlBroker } from './broker.js';
import { FRAME_COMMAND, TEMPORARY_CHAT_MESSAGE } from './constants.js';
import { ControllerRejected, ControllerUnavailable } from './errors.js';
import type { BrowserControlFrame } from './frames.js';
import { withBrowserControlIdentity } from './identity-context.js';
import { defaultNavigationUrlPolicy } from './navigation-policy.js';
import {
  BROWSER_TOOLS,
  EXTENSION_ROUTED_BROWSER_TOOLS,
  extensionControllerAvailable,
  routeBrowserTool,
  routedBrowserHandler,
} from './router.js';
import { createScope } from './scope.js';

const identity = {
  sessionId: 'session-1',
  principalId: 'principal:default:0123456789abcdef0123456789abcdef',
  transportFamily: 'local-api',
};

const controllerScope = createScope({
  ...identity,
  profileId: 'default',
  controllerId: 'controller-1',
  browserProfileId: 'chrome',
  capabilities: ['browser_snapshot', 'browser_navigate'],
});

function legacy() {
  const calls: string[] = [];
  const fallback = () => {
    calls.push('legacy');
    return 'legacy result';
  };
  return { calls, fallback };
}

/** A broker with one controller that answers every command with `answer(frame)`. */
async function attachedBroker(
  answer: (frame: BrowserControlFrame) => { ok: unknown; result?: unknown },
) {
  const broker = new BrowserControlBroker({ developerMode: false, commandTimeoutSeconds: 5 });
  const frames: BrowserControlFrame[] = [];
  await broker.attach(
    controllerScope,
    (frame) => {
      frames.push(frame);
      if (frame.method === FRAME_COMMAND) {
        broker.complete(String(frame.params.command_id), answer(frame));
      }
    },
    {},
  );
  return { broker, frames };
}

describe('routeBrowserTool', () => {
  it('calls legacy exactly once and leaves the broker alone when the feature is off', async () => {
    const { broker, frames } = await attachedBroker(() => ({ ok: true, result: 'x' }));
    const backend = legacy();
    const result = await routeBrowserTool({
      action: 'browser_snapshot',
      arguments: {},
      fallback: backend.fallback,
      broker,
      enabled: false,
      identity,
    });
    expect(result).toBe('legacy result');
    expect(backend.calls).toHaveLength(1);
    expect(frames).toHaveLength(0);
  });

  it('uses legacy without touching the broker when the identity is missing', async () => {
    const { broker, frames } = await attachedBroker(() => ({ ok: true }));
    for (const missing of [{ principalId: '' }, { transportFamily: null }]) {
      const backend = legacy();
      await routeBrowserTool({
        action: 'browser_snapshot',
        arguments: {},
        fallback: backend.fallback,
        broker,
        enabled: true,
        identity: { ...identity, ...missing },
      });
      expect(backend.calls).toHaveLength(1);
    }
    expect(frames).toHaveLength(0);
  });

  it('keeps legacy for a stamped identity whose lane never registered', async () => {
    const broker = new BrowserControlBroker({ developerMode: false });
    const backend = legacy();
    await routeBrowserTool({
      action: 'browser_snapshot',
      arguments: {},
      fallback: backend.fallback,
      broker,
      enabled: true,
      identity,
    });
    expect(backend.calls).toHaveLength(1);
  });

  it('fails closed for a registered but offline lane and never calls legacy', async () => {
    const { broker } = await attachedBroker(() => ({ ok: true }));
    expect(broker.laneRegistered(identity)).toBe(true);
    await broker.disconnect(controllerScope);
    expect(broker.laneRegistered(identity)).toBe(true);
    expect(broker.select(controllerScope, 'browser_snapshot')).toBeNull();
    const backend = legacy();
    await expect(
      routeBrowserTool({
        action: 'browser_snapshot',
        arguments: {},
        fallback: backend.fallback,
        broker,
        enabled: true,
        identity,
      }),
    ).rejects.toThrow('bound browser controller cannot execute browser_snapshot');
    expect(backend.calls).toHaveLength(0);
  });

  it('fails closed for an ambiguous lane instead of picking a controller or falling back', async () => {
    const { broker, frames } = await attachedBroker(() => ({ ok: true, result: 'x' }));
    // Same session, principal and family under another profile: a second match for the lookup lane.
    const otherFrames: BrowserControlFrame[] = [];
    await broker.attach(createScope({ ...controllerScope, profileId: 'work' }), (frame) => {
      otherFrames.push(frame);
    });
    expect(broker.scopeForSession(identity)).toBeNull();
    const backend = legacy();
    await expect(
      routeBrowserTool({
        action: 'browser_snapshot',
        arguments: {},
        fallback: backend.fallback,
        broker,
        enabled: true,
        identity,
      }),
    ).rejects.toThrow(
      new ControllerUnavailable('bound browser controller unavailable for browser_snapshot'),
    );
    expect(backend.calls).toHaveLength(0);
    expect(frames).toHaveLength(0);
    expect(otherFrames).toHaveLength(0);
  });

  it('fails closed for tools the controller cannot execute, including the never-routed ones', async () => {
    const { broker } = await attachedBroker(() => ({ ok: true }));
    for (const action of [
      'browser_click',
      'browser_get_images',
      'browser_vision',
      'browser_console',
    ]) {
      const backend = legacy();
      await expect(
        routeBrowserTool({
          action,
          arguments: {},
          fallback: backend.fallback,
          broker,
          enabled: true,
          identity,
        }),
      ).rejects.toThrow(ControllerUnavailable);
      expect(backend.calls).toHaveLength(0);
    }
  });

  it('dispatches unmodified arguments with the tool call id and serialises mapping results', async () => {
    const { broker, frames } = await attachedBroker(() => ({
      ok: true,
      result: { title: 'Example Domain', url: 'https://example.test/', refs: [] },
    }));
    const args = Object.freeze({ include: 'accessibility' });
    const result = await routeBrowserTool({
      action: 'browser_snapshot',
      arguments: args,
      fallback: legacy().fallback,
      broker,
      enabled: true,
      identity,
      toolCallId: 'call-7',
    });
    expect(result).toBe('{"title": "Example Domain", "url": "https://example.test/", "refs": []}');
    expect(frames[0]?.params).toMatchObject({
      action: 'browser_snapshot',
      arguments: { include: 'accessibility' },
      tool_call_id: 'call-7',
    });
  });

  it('returns string results unchanged', async () => {
    const { broker } = await attachedBroker(() => ({ ok: true, result: 'plain text' }));
    await expect(
      routeBrowserTool({
        action: 'browser_snapshot',
        arguments: {},
        fallback: legacy().fallback,
        broker,
        enabled: true,
        identity,
      }),
    ).resolves.toBe('plain text');
  });

  it('refuses routing-alias arguments, also nested, before any dispatch', async () => {
    const { broker, frames } = await attachedBroker(() => ({ ok: true }));
    for (const args of [
      { targetId: 'x' },
      { options: { frame_id: 2 } },
      { list: [{ sessionId: 's' }] },
    ]) {
      await expect(
        routeBrowserTool({
          action: 'browser_snapshot',
          arguments: args,
          fallback: legacy().fallback,
          broker,
          enabled: true,
          identity,
        }),
      ).rejects.toThrow('unsafe browser_snapshot arguments');
    }
    expect(frames).toHaveLength(0);
  });

  it('enforces the navigation URL policy before dispatch', async () => {
    const { broker, frames } = await attachedBroker(() => ({ ok: true, result: 'ok' }));
    await expect(
      routeBrowserTool({
        action: 'browser_navigate',
        arguments: { url: 'http://169.254.169.254/latest/meta-data/' },
        fallback: legacy().fallback,
        broker,
        enabled: true,
        identity,
      }),
    ).rejects.toThrow('unsafe browser_navigate arguments');
    expect(frames).toHaveLength(0);
    await expect(
      routeBrowserTool({
        action: 'browser_navigate',
        arguments: { url: 'http://10.1.2.3/intranet' },
        fallback: legacy().fallback,
        broker,
        enabled: true,
        identity,
      }),
    ).resolves.toBe('ok');
  });

  it('never retries legacy after the selected controller fails', async () => {
    const { broker } = await attachedBroker(() => ({ ok: false, result: 'page crashed' }));
    const backend = legacy();
    await expect(
      routeBrowserTool({
        action: 'browser_snapshot',
        arguments: {},
        fallback: backend.fallback,
        broker,
        enabled: true,
        identity,
      }),
    ).rejects.toThrow(ControllerRejected);
    expect(backend.calls).toHaveLength(0);
  });

  it('refuses a temporary chat once an identity is bound', async () => {
    const broker = new BrowserControlBroker({ developerMode: false });
    await expect(
      routeBrowserTool({
        action: 'browser_snapshot',
        arguments: {},
        fallback: legacy().fallback,
        broker,
        enabled: true,
        identity,
        isEphemeralSession: (id) => id === 'session-1',
      }),
    ).rejects.toThrow(TEMPORARY_CHAT_MESSAGE);
  });
});

describe('routedBrowserHandler', () => {
  it('reads the identity from the bound context when no task id is given', async () => {
    const { broker, frames } = await attachedBroker(() => ({ ok: true, result: 'routed' }));
    const result = await withBrowserControlIdentity({ ...identity, toolCallId: 'ctx-call' }, () =>
      routedBrowserHandler({
        action: 'browser_snapshot',
        arguments: {},
        fallback: legacy().fallback,
        broker,
        flags: () => ({ enabled: true, developerMode: false }),
      }),
    );
    expect(result).toBe('routed');
    expect(frames[0]?.params.tool_call_id).toBe('ctx-call');
  });

  it('falls back when no broker is wired into the process or the flag is off', async () => {
    const backend = legacy();
    await withBrowserControlIdentity(identity, async () => {
      await routedBrowserHandler({
        action: 'browser_snapshot',
        arguments: {},
        fallback: backend.fallback,
        flags: () => ({ enabled: true, developerMode: false }),
      });
      const { broker } = await attachedBroker(() => ({ ok: true }));
      await routedBrowserHandler({
        action: 'browser_snapshot',
        arguments: {},
        fallback: backend.fallback,
        broker,
        flags: () => ({ enabled: false, developerMode: false }),
      });
    });
    expect(backend.calls).toHaveLength(2);
  });
});

describe('extensionControllerAvailable', () => {
  it('is per action and needs a bound identity, not just the flag', async () => {
    const { broker } = await attachedBroker(() => ({ ok: true }));
    const available = (action: string, bound = identity) =>
      extensionControllerAvailable({ action, broker, enabled: true, identity: bound });
    expect(available('browser_snapshot')).toBe(true);
    expect(available('browser_click')).toBe(false);
    expect(available('browser_snapshot', { ...identity, principalId: '' })).toBe(false);
    expect(
      extensionControllerAvailable({
        action: 'browser_snapshot',
        broker,
        enabled: false,
        identity,
      }),
    ).toBe(false);
  });

  it('turns false when the controller disappears after the schema was built', async () => {
    const { broker } = await attachedBroker(() => ({ ok: true }));
    expect(
      extensionControllerAvailable({ action: 'browser_snapshot', broker, enabled: true, identity }),
    ).toBe(true);
    await broker.detach(controllerScope);
    expect(
      extensionControllerAvailable({ action: 'browser_snapshot', broker, enabled: true, identity }),
    ).toBe(false);
  });

  it('lists ten browser tools of which seven route to the extension', () => {
    expect(BROWSER_TOOLS).toHaveLength(10);
    expect(EXTENSION_ROUTED_BROWSER_TOOLS).toEqual([
      'browser_navigate',
      'browser_snapshot',
      'browser_click',
      'browser_type',
      'browser_scroll',
      'browser_back',
      'browser_press',
    ]);
  });
});

describe('defaultNavigationUrlPolicy', () => {
  it('blocks metadata, link-local and non-web schemes but allows private addresses', () => {
    for (const url of [
      'http://169.254.169.254/',
      'http://metadata.google.internal/x',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'nonsense',
    ]) {
      expect(() => defaultNavigationUrlPolicy(url)).toThrow();
    }
    for (const url of ['https://example.com/', 'http://10.0.0.5:8080/', 'about:blank']) {
      expect(() => defaultNavigationUrlPolicy(url)).not.toThrow();
    }
  });

  it('judges IPv6 literals after normalising them: embedded IPv4, link-local, metadata', () => {
    for (const url of [
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[0:0:0:0:0:ffff:a9fe:a9fe]/latest/meta-data/',
      'http://[::ffff:0:a9fe:a9fe]/',
      'http://[::169.254.169.254]/',
      'http://[64:ff9b::169.254.169.254]/',
      'http://[::ffff:169.254.1.1]/',
      'http://[fe80::1]/',
      'http://[FE80:0:0:0:0:0:0:1]:8080/',
      'http://[febf:ffff::1]/',
      'http://[fd00:ec2::254]/',
      'http://[fd00:0ec2:0000:0000:0000:0000:0000:0254]/',
      'http://[::ffff:100.100.100.200]/',
    ]) {
      expect(() => defaultNavigationUrlPolicy(url), url).toThrow();
    }
    for (const url of [
      'http://[::1]:3000/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:10.0.0.5]/',
      'http://[fd12:3456::1]/',
      'http://[fec0::1]/',
      'https://[2001:db8::1]/',
      'http://127.0.0.1:8080/',
    ]) {
      expect(() => defaultNavigationUrlPolicy(url), url).not.toThrow();
    }
  });
});
