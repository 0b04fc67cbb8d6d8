import { describe, expect, it } from 'vitest';
import { BrowserControlBroker } from './broker.js';
import { createScope } from './scope.js';
import {
  BROWSER_TURN_PROTOCOL,
  bindBrowserTurnTarget,
  parseBrowserTurnTarget,
} from './turn-target.js';

function envelope(control: Record<string, unknown>, protocol = BROWSER_TURN_PROTOCOL): string {
  return JSON.stringify({
    protocol,
    browser_control: {
      route: 'extension-controller',
      availability: 'available',
      controller_id: 'c1',
      tab_id: 7,
      frame_id: 0,
      document_generation: 3,
      ...control,
    },
  });
}

describe('parseBrowserTurnTarget', () => {
  it('reads a usable envelope without the document generation', () => {
    expect(parseBrowserTurnTarget(envelope({}))).toEqual({
      controllerId: 'c1',
      tabId: 7,
      frameId: 0,
    });
  });

  it('refuses plain text, null, malformed JSON and another protocol', () => {
    expect(parseBrowserTurnTarget('hello')).toBeNull();
    expect(parseBrowserTurnTarget(null)).toBeNull();
    expect(parseBrowserTurnTarget('{"protocol":')).toBeNull();
    expect(parseBrowserTurnTarget(envelope({}, 'hermes.browser.turn.v1'))).toBeNull();
  });

  it('refuses a zero, boolean, fractional or missing tab id', () => {
    for (const tab_id of [0, true, 1.5, '7', undefined, -2]) {
      expect(parseBrowserTurnTarget(envelope({ tab_id }))).toBeNull();
    }
  });

  it('refuses an unavailable or legacy-routed envelope and a blank controller id', () => {
    expect(parseBrowserTurnTarget(envelope({ availability: 'offline' }))).toBeNull();
    expect(parseBrowserTurnTarget(envelope({ route: 'legacy' }))).toBeNull();
    expect(parseBrowserTurnTarget(envelope({ controller_id: '  ' }))).toBeNull();
  });
});

describe('bindBrowserTurnTarget', () => {
  it('sets the target from a usable envelope and clears it on every other turn', async () => {
    const broker = new BrowserControlBroker({ developerMode: false });
    const scope = createScope({
      principalId: 'p',
      sessionId: 's1',
      controllerId: 'c1',
      transportFamily: 'local-api',
      capabilities: ['controller.noop'],
    });
    const params: Array<Readonly<Record<string, unknown>>> = [];
    await broker.attach(
      scope,
      (frame) => {
        params.push(frame.params);
        broker.complete(String(frame.params.command_id), { ok: true });
      },
      {},
    );
    bindBrowserTurnTarget({ broker, sessionId: 's1', userMessage: envelope({}) });
    await broker.dispatch({ scope, action: 'controller.noop' });
    bindBrowserTurnTarget({ broker, sessionId: 's1', userMessage: 'just text' });
    await broker.dispatch({ scope, action: 'controller.noop' });
    expect(params[0]).toMatchObject({ tab_id: 7, frame_id: 0 });
    expect(params[0]).not.toHaveProperty('document_generation');
    expect(params[1]).not.toHaveProperty('tab_id');
  });
});
