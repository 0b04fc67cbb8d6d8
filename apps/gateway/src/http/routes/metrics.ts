import type { Hono } from 'hono';
import type { GatewayDeps, GatewayEnv } from '../gateway-env.js';

/**
 * `GET /metrics` in the Prometheus text format. Like every route but `/health`, it needs the API
 * key when one is configured; without a key the gateway listens on loopback only, so the figures
 * never leave the machine unauthenticated.
 */
export function registerMetricsRoutes(app: Hono<GatewayEnv>, deps: GatewayDeps): void {
  app.get('/metrics', async (context) => {
    const { contentType, body } = await deps.metrics();
    return context.body(body, 200, { 'content-type': contentType });
  });
}
