import { AsyncLocalStorage } from 'node:async_hooks';
import type { Transport } from '../rpc/connection.js';

/**
 * The identity a turn carries, bound around work the bridge does outside a turn (a `/review`
 * dispatch) so that what it starts belongs to this front-end session: the UI session id, the
 * stored conversation (session key), the profile and the steer authority (transport + session).
 */
export interface UiSessionIdentity {
  readonly uiSessionId: string;
  readonly sessionKey: string;
  readonly storedSessionId: string;
  readonly profile: string;
  readonly steerAuthority: { readonly transport: Transport | 'bridge'; readonly sessionId: string };
}

const storage = new AsyncLocalStorage<UiSessionIdentity>();

export function withUiSession<T>(identity: UiSessionIdentity, fn: () => T): T {
  return storage.run(identity, fn);
}

/** The identity bound to the current task, or undefined outside any dispatch. */
export function currentUiSession(): UiSessionIdentity | undefined {
  return storage.getStore();
}
