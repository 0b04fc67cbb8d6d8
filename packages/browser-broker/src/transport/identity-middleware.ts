import type { Context, MiddlewareHandler } from 'hono';
import { withBrowserControlIdentity } from '../identity-context.js';
import { deriveApiPrincipal, nodePeerAddress, transportFamilyForPeer } from './principal.js';

export interface BrowserControlIdentityMiddlewareOptions {
  /** The API key expected for the routed profile; without one no principal is stamped. */
  readonly apiKey: (profile: string) => string | undefined;
  /** The routed profile (default `"default"`). */
  readonly profile?: (context: Context) => string;
  /** The TCP peer (default: `@hono/node-server`'s incoming socket). */
  readonly peerAddress?: (context: Context) => string | undefined;
}

/**
 * Stamps the server-derived principal and transport family of every API request into the bound
 * browser-control identity, so agent turns started by the request route to that request's lane.
 * The session is bound later, by the turn; a turn started outside this request's async context
 * must carry the identity explicitly.
 */
export function browserControlIdentityMiddleware(
  options: BrowserControlIdentityMiddlewareOptions,
): MiddlewareHandler {
  const profileOf = options.profile ?? (() => 'default');
  const peerOf = options.peerAddress ?? nodePeerAddress;
  return async (context, next) => {
    const profile = profileOf(context);
    const apiKey = options.apiKey(profile);
    if (!apiKey) {
      await next();
      return;
    }
    await withBrowserControlIdentity(
      {
        principalId: deriveApiPrincipal({ profile, apiKey }),
        transportFamily: transportFamilyForPeer(peerOf(context)),
      },
      () => next(),
    );
  };
}
