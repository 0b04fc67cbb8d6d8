import type { ProfileRuntime, ProfileRuntimeSet } from '@hermes/agent';
import type { ArtifactStoreCache } from '@hermes/artifact-store';
import type { BrowserControlBroker, ExtensionControlFlagSource } from '@hermes/browser-broker';
import type { HttpBindings } from '@hono/node-server';
import type { Logger } from 'pino';
import type { ActiveTurns } from '../runtime/active-turns.js';
import type { RunRegistry } from '../runtime/run-registry.js';
import type { SlashCommands } from '../runtime/slash-commands.js';
import type { TurnOutcome, TurnRequest } from '../runtime/turn-runner.js';

export type GatewayEnv = {
  Bindings: HttpBindings;
  Variables: {
    /** The profile this request addresses (bare route: the launch profile). */
    runtime: ProfileRuntime;
    /** `/p/<name>` when the request came through a prefix, else `''`. */
    prefix: string;
    /** The path without the prefix (what the route table is keyed on). */
    routedPath: string;
  };
};

/** What the routes are built from; one instance per gateway process. */
export interface GatewayDeps {
  /** The profiles this gateway serves (the launch profile; under multiplex, the served set). */
  readonly registry: ProfileRuntimeSet;
  readonly turns: ActiveTurns;
  readonly logger: Logger;
  /** `api_server.max_request_bytes` of the launch profile. */
  readonly maxRequestBytes: number;
  /** True when the listener is bound to a loopback address only. */
  readonly loopbackOnly: boolean;
  readonly version: string;
  readonly startedAt: number;
  readonly broker: BrowserControlBroker;
  readonly flags: ExtensionControlFlagSource;
  readonly artifactStores: ArtifactStoreCache;
  readonly runs: RunRegistry;
  readonly slash: SlashCommands;
  /** Runs one model turn (admission, profile scope, transcript); see `runtime/turn-runner.ts`. */
  readonly runTurn: (request: TurnRequest) => Promise<TurnOutcome>;
  readonly keepalive: { readonly chatStreamMs: number; readonly apiStreamMs: number };
  /** Live process facts for `/health/detailed` and the `status` verb. */
  readonly liveStatus: () => Record<string, unknown>;
  /** The Prometheus exposition of `GET /metrics`. */
  readonly metrics: () => Promise<{ contentType: string; body: string }>;
}
