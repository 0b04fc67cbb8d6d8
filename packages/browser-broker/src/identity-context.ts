import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The server-bound browser identity of the current request/turn. It is set by the transport that
 * authenticated the request (never from tool arguments) and follows `await` chains; work started
 * outside the request's async context must carry it explicitly.
 */
export interface BrowserControlIdentity {
  readonly sessionId?: string | null | undefined;
  readonly taskId?: string | null | undefined;
  readonly principalId?: string | null | undefined;
  readonly transportFamily?: string | null | undefined;
  /** The agent's current tool-call id, when the caller knows it. */
  readonly toolCallId?: string | null | undefined;
}

const storage = new AsyncLocalStorage<BrowserControlIdentity>();

/** Runs `task` with `identity` bound (merged over any outer binding). */
export function withBrowserControlIdentity<T>(identity: BrowserControlIdentity, task: () => T): T {
  return storage.run({ ...storage.getStore(), ...identity }, task);
}

export function getBrowserControlIdentity(): BrowserControlIdentity {
  return storage.getStore() ?? {};
}
