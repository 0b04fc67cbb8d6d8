import type { Hono } from 'hono';
import type { GatewayDeps, GatewayEnv } from '../gateway-env.js';

export function registerHealthRoutes(app: Hono<GatewayEnv>, deps: GatewayDeps): void {
  const liveness = () => ({ status: deps.turns.draining ? 'draining' : 'ok', platform: 'hermes' });
  app.get('/health', (context) => context.json(liveness()));
  app.get('/v1/health', (context) => context.json(liveness()));
  app.get('/health/detailed', (context) => {
    const runtime = context.get('runtime');
    let modelConfigured = false;
    let configError: string | null = null;
    try {
      const { config } = runtime.config();
      modelConfigured = config.model.baseUrl !== '' || config.model.provider !== '';
    } catch (error) {
      configError = error instanceof Error ? error.message : String(error);
    }
    return context.json({
      ...liveness(),
      profile: runtime.name,
      version: deps.version,
      session_store: runtime.storeIfOpen ? 'ok' : 'not_open',
      model_configured: modelConfigured,
      config_error: configError,
      ...deps.liveStatus(),
    });
  });
}
