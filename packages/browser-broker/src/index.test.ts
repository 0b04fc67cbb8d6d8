import { describe, expect, it } from 'vitest';
import * as client from './client/index.js';
import * as api from './index.js';

// The README's API table is what integrators code against; each runtime name it lists must exist.
describe('package entry points', () => {
  it('export every function and class the README documents', () => {
    const documented = [
      'BrowserControlBroker',
      'getBrowserControlBroker',
      'createScope',
      'sameIdentity',
      'sameScope',
      'scopeToWire',
      'filterBrowserControlCapabilities',
      'browserControlProtocolSupported',
      'flagsFromConfigReader',
      'liveExtensionControlFlags',
      'readFlags',
      'routeBrowserTool',
      'routedBrowserHandler',
      'extensionControllerAvailable',
      'withBrowserControlIdentity',
      'getBrowserControlIdentity',
      'createBrowserControlRoutes',
      'createBrowserControlUpgradeHandler',
      'serveControllerConnection',
      'createWebSocketSender',
      'deriveApiPrincipal',
      'transportFamilyForPeer',
      'bearerMatches',
      'nodePeerAddress',
      'browserControlIdentityMiddleware',
      'parseBrowserTurnTarget',
      'bindBrowserTurnTarget',
      'BrowserControlError',
      'ControllerTicketInvalid',
      'ControllerUnavailable',
      'ControllerCancelled',
      'ControllerTimeout',
      'ControllerRejected',
      'BrowserControllerConnectionError',
    ];
    const exported = api as Record<string, unknown>;
    expect(documented.filter((name) => typeof exported[name] !== 'function')).toEqual([]);
    expect(typeof api.CommandFrameSchema).toBe('object');
    expect(typeof api.ResultFrameSchema).toBe('object');
  });

  it('export the reference controller from the client entry point', () => {
    expect(typeof client.BrowserControllerClient).toBe('function');
    expect(typeof client.ControllerConnectFailed).toBe('function');
  });
});
