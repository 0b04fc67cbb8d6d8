import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';

/**
 * An empty async context, built fresh for every call — the Node.js counterpart of running a task in
 * a new `contextvars.Context()`. It is never captured once and reused: a context captured at module
 * load (or at the first spawn) is the context of whoever got there first, and a module imported
 * for the first time inside a request's or profile's scope would pin that scope into every task.
 *
 * Node.js has no public "empty context" API. A new `AsyncResource` inherits the current stores of
 * every `AsyncLocalStorage`; this clears them on the new resource before anything runs in it:
 * - async_hooks-backed storage (Node 20 and 22): each store is an own symbol property named
 *   `kResourceStore`, one per storage instance;
 * - AsyncContextFrame-backed storage (Node 24's default): the resource holds the caller's frame
 *   (own symbol property `context_frame`), a map keyed by storage instances.
 * Whether that worked is checked once, with a probe storage, and reported by
 * {@link emptyContextIsolationWorks} so a runtime that changes these internals is noticed rather
 * than silently leaking a scope.
 */

const RESOURCE_TYPE = 'HermesSupervisedTask';

/** Own symbol properties of an `AsyncResource` that hold the caller's stores, by runtime. */
const STORE_SLOTS = new Set(['kResourceStore', 'context_frame']);

/** A frame: a map (Node's own, not necessarily a global `Map`) keyed by storage instances. */
function isContextFrame(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const keys = (value as { keys?: unknown }).keys;
  if (typeof keys !== 'function') return false;
  for (const key of keys.call(value) as Iterable<unknown>) {
    if (!(key instanceof AsyncLocalStorage)) return false;
  }
  return true;
}

function emptyResource(): AsyncResource {
  const resource = new AsyncResource(RESOURCE_TYPE);
  const slots = resource as unknown as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(resource)) {
    if (STORE_SLOTS.has(key.description ?? '') || isContextFrame(slots[key])) {
      slots[key] = undefined;
    }
  }
  return resource;
}

/**
 * Runs `fn` synchronously in a fresh, empty async context: no `AsyncLocalStorage` store of the
 * caller is visible inside it, nor in anything it awaits or schedules. Stores the function enters
 * itself stay inside it.
 */
export function runInEmptyContext<R>(fn: () => R): R {
  return emptyResource().runInAsyncScope(fn);
}

let isolationWorks: boolean | undefined;

/** Whether {@link runInEmptyContext} really hides the caller's stores on this runtime (checked once). */
export function emptyContextIsolationWorks(): boolean {
  if (isolationWorks === undefined) {
    const probe = new AsyncLocalStorage<symbol>();
    const token = Symbol('probe');
    isolationWorks =
      probe.run(token, () => runInEmptyContext(() => probe.getStore())) === undefined;
    // An enabled storage keeps async hooks on for the whole process; the probe is done with.
    probe.disable();
  }
  return isolationWorks;
}
