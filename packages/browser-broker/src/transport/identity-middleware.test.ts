import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { getBrowserControlIdentity, withBrowserControlIdentity } from '../identity-context.js';
import { browserControlIdentityMiddleware } from './identity-middleware.js';
import { deriveApiPrincipal } from './principal.js';

function appWith(options: Parameters<typeof browserControlIdentityMiddleware>[0]) {
  const app = new Hono();
  app.use(browserControlIdentityMiddleware(options));
  // A turn binds its session inside the request; the stamped principal and family stay.
  app.get('/turn', async (context) =>
    withBrowserControlIdentity({ sessionId: 's-1' }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return context.json(getBrowserControlIdentity());
    }),
  );
  return app;
}

describe('browserControlIdentityMiddleware', () => {
  it('stamps the derived principal and local-api for a loopback peer across awaits', async () => {
    const app = appWith({ apiKey: () => 'key', peerAddress: () => '::ffff:127.0.0.1' });
    const identity = await (await app.request('/turn')).json();
    expect(identity).toEqual({
      principalId: deriveApiPrincipal({ profile: 'default', apiKey: 'key' }),
      transportFamily: 'local-api',
      sessionId: 's-1',
    });
  });

  it('stamps remote-api for other peers and the routed profile', async () => {
    const app = appWith({
      apiKey: () => 'key',
      profile: () => 'work',
      peerAddress: () => '203.0.113.7',
    });
    const identity = (await (await app.request('/turn')).json()) as Record<string, string>;
    expect(identity.transportFamily).toBe('remote-api');
    expect(identity.principalId).toMatch(/^principal:work:/);
  });

  it('stamps nothing without a configured key', async () => {
    const app = appWith({ apiKey: () => undefined, peerAddress: () => '127.0.0.1' });
    expect(await (await app.request('/turn')).json()).toEqual({ sessionId: 's-1' });
  });
});
