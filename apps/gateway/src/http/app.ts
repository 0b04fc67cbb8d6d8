import { createArtifactRoutes } from '@hermes/artifact-store';
import {
  BROWSER_CONTROL_REGISTER_PATH,
  bearerMatches,
  browserControlIdentityMiddleware,
  createBrowserControlRoutes,
  deriveApiPrincipal,
  nodePeerAddress,
  transportFamilyForPeer,
} from '@hermes/browser-broker';
import { type Context, Hono } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';
import { profileApiKey, servedProfile } from '../runtime/profiles.js';
import { assertDeclaredLength } from './body.js';
import { errorBody, HttpError, httpErrors, renderHttpError } from './errors.js';
import type { GatewayDeps, GatewayEnv } from './gateway-env.js';
import { PROFILE_REJECTED_BODY, splitProfilePrefix } from './profile-prefix.js';
import { registerChatCompletionRoutes } from './routes/chat-completions.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerInfoRoutes } from './routes/info.js';
import { registerMetricsRoutes } from './routes/metrics.js';
import { registerResponseRoutes } from './routes/responses.js';
import { registerRunRoutes } from './routes/runs.js';
import { registerSessionChatRoutes } from './routes/session-chat.js';
import { registerSessionRoutes } from './routes/sessions.js';

/** Paths answered without a key: liveness probes. */
const PUBLIC_PATHS = new Set(['/health', '/v1/health']);

/** Paths whose package routes run their own authentication ladder (browser control, artifacts). */
function ownsAuthentication(path: string): boolean {
  return (
    path.startsWith('/v1/browser-control/') ||
    path.startsWith('/v1/artifacts/') ||
    path === '/v1/capabilities'
  );
}

/**
 * The whole HTTP surface as one hono app: every route at its bare path and mirrored under
 * `/p/<profile>`. Order: profile resolution (fail closed) → declared body size → bearer auth →
 * browser identity stamping → routes.
 */
export function createGatewayApp(deps: GatewayDeps): Hono<GatewayEnv> {
  // The middleware sits on the outer app so it runs once per request, whichever mount matches.
  const app = new Hono<GatewayEnv>();
  const api = new Hono<GatewayEnv>();

  app.use('*', async (context, next) => {
    // The request line is logged at debug only: skip the timing and the object otherwise.
    if (!deps.logger.isLevelEnabled('debug')) return next();
    const started = performance.now();
    await next();
    deps.logger.debug(
      {
        method: context.req.method,
        url: context.req.url.slice(context.req.url.indexOf('/', 8)),
        status: context.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      },
      'request',
    );
  });

  app.use('*', async (context, next) => {
    const split = splitProfilePrefix(context.req.path);
    if (!split) return context.json(PROFILE_REJECTED_BODY, 404);
    const runtime = deps.registry.find(split.profile ?? undefined);
    if (!runtime) return context.json(PROFILE_REJECTED_BODY, 404);
    context.set('runtime', runtime);
    context.set('prefix', split.profile === null ? '' : `/p/${split.profile}`);
    context.set('routedPath', split.path);
    // Multiplexed profiles run inside their own scope (home + secrets); the launch profile of a
    // single-profile gateway already is the process home.
    if (deps.registry.serve === 'multiplex') return runtime.run(() => next());
    await next();
  });

  app.use('*', async (context, next) => {
    const path = context.get('routedPath');
    // A draining gateway accepts no new controller: its socket would be refused at the upgrade.
    if (path === BROWSER_CONTROL_REGISTER_PATH && deps.turns.draining) throw httpErrors.draining();
    if (!path.startsWith('/v1/artifacts/')) assertDeclaredLength(context, deps.maxRequestBytes);
    if (PUBLIC_PATHS.has(path) || ownsAuthentication(path)) return next();
    const expected = profileApiKey(context.get('runtime'));
    if (expected) {
      if (!bearerMatches(context.req.header('authorization'), expected)) {
        throw new HttpError({
          status: 401,
          code: 'invalid_api_key',
          message: 'Invalid or missing API key (Authorization: Bearer <API_SERVER_KEY>)',
        });
      }
    } else if (!deps.loopbackOnly) {
      // A listener beyond loopback serves no profile without a key of its own.
      throw new HttpError({
        status: 403,
        code: 'api_key_required',
        message: `Profile ${context.get('runtime').name} has no API_SERVER_KEY; it is not served beyond loopback`,
      });
    }
    return next();
  });

  const apiKeyFor = (profile: string) => {
    const runtime = servedProfile(deps.registry, profile);
    return runtime ? profileApiKey(runtime) : undefined;
  };
  const profileOf = (context: Context) => (context as Context<GatewayEnv>).get('runtime').name;
  app.use('*', browserControlIdentityMiddleware({ apiKey: apiKeyFor, profile: profileOf }));

  registerHealthRoutes(api, deps);
  registerMetricsRoutes(api, deps);
  registerInfoRoutes(api, deps);
  registerSessionRoutes(api, deps);
  registerSessionChatRoutes(api, deps);
  registerChatCompletionRoutes(api, deps);
  registerResponseRoutes(api, deps);
  registerRunRoutes(api, deps);

  api.route(
    '/',
    createBrowserControlRoutes({
      broker: deps.broker,
      flags: deps.flags,
      apiKey: apiKeyFor,
      profile: profileOf,
      sessionExists: async ({ profile, sessionId }) => {
        const runtime = servedProfile(deps.registry, profile);
        if (!runtime) return false;
        const store = await runtime.store();
        return store.getSession(sessionId) !== undefined;
      },
    }),
  );
  api.route(
    '/',
    createArtifactRoutes({
      stores: deps.artifactStores,
      isEnabled: () => deps.flags().enabled,
      authenticate: (context) => {
        const runtime = (context as Context<GatewayEnv>).get('runtime');
        const expected = profileApiKey(runtime);
        if (!expected) {
          return {
            ok: false,
            status: 403,
            code: 'browser_control_auth_required',
            message: 'browser extension control requires an API server key (API_SERVER_KEY)',
          };
        }
        if (!bearerMatches(context.req.header('authorization'), expected)) {
          return {
            ok: false,
            status: 401,
            code: 'invalid_api_key',
            message: 'invalid or missing bearer token',
          };
        }
        return {
          ok: true,
          principalId: deriveApiPrincipal({ profile: runtime.name, apiKey: expected }),
          profile: runtime.name,
        };
      },
      resolveTransportFamily: (context) => transportFamilyForPeer(nodePeerAddress(context)),
    }),
  );

  app.onError((error, context) => {
    if (HttpError.isInstance(error)) return renderHttpError(context, error);
    deps.logger.error({ err: error, path: context.req.path }, 'request failed');
    return context.json(
      errorBody({ status: 500, code: 'internal_error', message: 'Internal server error' }),
      500,
    );
  });
  const allowedMethods = routeMethods(api);
  app.notFound((context) => {
    const { method, path } = context.req;
    const allowed = allowedMethods(context.get('routedPath') ?? path);
    if (allowed.length > 0) {
      context.header('Allow', allowed.join(', '));
      return context.json(
        errorBody({
          status: 405,
          code: 'method_not_allowed',
          message: `${method} is not allowed on ${path} (allowed: ${allowed.join(', ')})`,
        }),
        405,
      );
    }
    return context.json(
      errorBody({ status: 404, code: 'not_found', message: `No route for ${method} ${path}` }),
      404,
    );
  });
  app.route('/', api);
  app.route('/p/:profile', api);
  return app;
}

/**
 * The methods `app`'s routes answer on a path (its middleware, registered for every method, left
 * out), so a known path asked with another method is answered 405 with `Allow` rather than 404.
 */
function routeMethods(app: Hono<GatewayEnv>): (path: string) => string[] {
  const router = new TrieRouter<string>();
  const methods = new Set<string>();
  for (const route of app.routes) {
    if (route.method === 'ALL') continue;
    router.add(route.method, route.path, route.method);
    methods.add(route.method);
  }
  return (path) => {
    const allowed = [...methods].filter((method) => router.match(method, path)[0].length > 0);
    if (allowed.includes('GET') && !allowed.includes('HEAD')) allowed.push('HEAD');
    return allowed;
  };
}
