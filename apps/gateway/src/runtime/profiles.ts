import type {
  ProfileDeliveryOptions,
  ProfileRuntime,
  ProfileRuntimeSet,
  RunTurnOptions,
  TurnResult,
} from '@hermes/agent';

/** The surface turns run under (`platform_toolsets.api_server`, `hermes-api-server`). */
export const API_SERVER_PLATFORM = 'api_server';

/** The API key a profile expects (`api_server.key` or its `API_SERVER_KEY`); none while its config does not parse. */
export function profileApiKey(runtime: ProfileRuntime): string | undefined {
  try {
    return runtime.config().config.apiServer.key;
  } catch {
    return undefined;
  }
}

/**
 * The runtime of a served profile named as the gateway knows it (`runtime.name`): the launch
 * profile by its own name, any other only while it is served.
 */
export function servedProfile(
  profiles: ProfileRuntimeSet,
  name: string | undefined,
): ProfileRuntime | undefined {
  if (name === undefined || name === profiles.launch.name) return profiles.launch;
  return profiles.find(name);
}

/**
 * How a profile's async delegations (`/review`, background `delegate_task`) come back: the
 * gateway runs the injected completion turn through its own turn runner (admission, active-turn
 * tracking, profile scope), and only while the session is idle.
 */
export interface DelegationWiring {
  runTurn(runtime: ProfileRuntime, options: RunTurnOptions): Promise<TurnResult>;
  isIdle(runtime: ProfileRuntime, sessionId: string): boolean;
}

/**
 * Completion delivery for one profile: every conversation in the profile's store is the
 * gateway's, so a completion goes back to the first of its origin, parent and session key that
 * is a stored session.
 */
export function gatewayDelivery(
  runtime: ProfileRuntime,
  wiring: DelegationWiring,
): ProfileDeliveryOptions {
  return {
    owner: (event) => {
      const store = runtime.storeIfOpen;
      for (const candidate of [
        event.origin_session_id,
        event.parent_session_id,
        event.session_key,
      ]) {
        if (typeof candidate === 'string' && candidate !== '' && store?.getSession(candidate))
          return candidate;
      }
      return undefined;
    },
    runTurn: (options) => wiring.runTurn(runtime, options),
    isIdle: (sessionId) => wiring.isIdle(runtime, sessionId),
  };
}
