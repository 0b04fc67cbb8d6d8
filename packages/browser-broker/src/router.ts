import type { BrowserControlBroker } from './broker.js';
import { TEMPORARY_CHAT_MESSAGE } from './constants.js';
import { ControllerUnavailable } from './errors.js';
import { type ExtensionControlFlagSource, readFlags } from './flags.js';
import { type BrowserControlIdentity, getBrowserControlIdentity } from './identity-context.js';
import { defaultNavigationUrlPolicy, type NavigationUrlPolicy } from './navigation-policy.js';
import { toReferenceJson } from './python-json.js';

/** Every registered browser tool (toolset `browser`). */
export const BROWSER_TOOLS: readonly string[] = Object.freeze([
  'browser_navigate',
  'browser_snapshot',
  'browser_click',
  'browser_type',
  'browser_scroll',
  'browser_back',
  'browser_press',
  'browser_get_images',
  'browser_vision',
  'browser_console',
]);

/** The tools a bound lane dispatches to the extension; the rest fail closed when bound. */
export const EXTENSION_ROUTED_BROWSER_TOOLS: readonly string[] = Object.freeze([
  'browser_navigate',
  'browser_snapshot',
  'browser_click',
  'browser_type',
  'browser_scroll',
  'browser_back',
  'browser_press',
]);

/** Argument keys that would let a model steer which target a controller acts on. */
export const CONTROLLER_ROUTING_ALIAS_KEYS: readonly string[] = Object.freeze([
  'target_id',
  'targetId',
  'frame_id',
  'frameId',
  'session_id',
  'sessionId',
  'targetInfo',
]);

/** The broker calls the router needs (a `BrowserControlBroker` fits). */
export type RouterBroker = Pick<
  BrowserControlBroker,
  'scopeForSession' | 'laneRegistered' | 'select' | 'dispatch'
>;

export interface RouteBrowserToolOptions {
  readonly action: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The legacy browser backend for this call. */
  readonly fallback: () => unknown;
  readonly broker: RouterBroker;
  /** `browser.extension_control.enabled`, read live by the caller. */
  readonly enabled: boolean;
  readonly identity: BrowserControlIdentity;
  readonly toolCallId?: string | null | undefined;
  /** True when the session (or task) is a temporary chat. */
  readonly isEphemeralSession?: ((sessionOrTask: string) => boolean) | undefined;
  readonly navigationUrlPolicy?: NavigationUrlPolicy | undefined;
}

function present(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

// Nested objects are inspected too: a model must not smuggle a routing key one level down.
function containsRoutingAlias(value: unknown, depth = 0): boolean {
  if (depth > 8 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((item) => containsRoutingAlias(item, depth + 1));
  for (const [key, item] of Object.entries(value)) {
    if (CONTROLLER_ROUTING_ALIAS_KEYS.includes(key)) return true;
    if (containsRoutingAlias(item, depth + 1)) return true;
  }
  return false;
}

/**
 * Decides one browser tool call. Legacy backend when the feature is off, when there is no
 * server-bound identity, or when no controller ever registered for the lane. Once one has, the
 * extension lane is authoritative: a missing or incapable controller fails closed and a selected
 * controller's failure is final (never retried through legacy).
 */
export async function routeBrowserTool(options: RouteBrowserToolOptions): Promise<unknown> {
  const { action, broker, identity } = options;
  const sessionOrTask = present(identity.sessionId) ? identity.sessionId : identity.taskId;
  const bound = present(identity.principalId) || present(identity.transportFamily);
  if (
    options.enabled &&
    bound &&
    present(sessionOrTask) &&
    options.isEphemeralSession?.(sessionOrTask.trim()) === true
  ) {
    throw new ControllerUnavailable(TEMPORARY_CHAT_MESSAGE);
  }
  if (!options.enabled || !present(identity.principalId) || !present(identity.transportFamily)) {
    return options.fallback();
  }
  const lane = {
    sessionId: identity.sessionId,
    taskId: identity.taskId,
    principalId: identity.principalId,
    transportFamily: identity.transportFamily,
  };
  const scope = broker.scopeForSession(lane);
  if (!scope) {
    // Authentication alone must not make the lane authoritative: no extension ever registered
    // means the legacy backend keeps working.
    if (!broker.laneRegistered(lane)) return options.fallback();
    throw new ControllerUnavailable(`bound browser controller unavailable for ${action}`);
  }
  if (!broker.select(scope, action)) {
    throw new ControllerUnavailable(`bound browser controller cannot execute ${action}`);
  }
  if (containsRoutingAlias(options.arguments)) {
    throw new ControllerUnavailable(`unsafe ${action} arguments`);
  }
  if (action === 'browser_navigate') {
    const policy = options.navigationUrlPolicy ?? defaultNavigationUrlPolicy;
    try {
      policy(String(options.arguments.url ?? ''));
    } catch {
      throw new ControllerUnavailable('unsafe browser_navigate arguments');
    }
  }
  const result = await broker.dispatch({
    scope,
    action,
    arguments: options.arguments,
    toolCallId: options.toolCallId ?? null,
  });
  return typeof result === 'string' ? result : toReferenceJson(result);
}

export interface RoutedBrowserHandlerOptions {
  readonly action: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly fallback: () => unknown;
  /** The process's broker; absent (not wired into this process) means legacy. */
  readonly broker?: RouterBroker | undefined;
  readonly flags: ExtensionControlFlagSource;
  /** Explicit identity values win over the ones bound in the async context. */
  readonly identity?: BrowserControlIdentity | undefined;
  readonly isEphemeralSession?: ((sessionOrTask: string) => boolean) | undefined;
  readonly navigationUrlPolicy?: NavigationUrlPolicy | undefined;
}

function pick(
  explicit: string | null | undefined,
  bound: string | null | undefined,
): string | null | undefined {
  return present(explicit) ? explicit : bound;
}

/**
 * The wrapper every browser tool handler calls: fills session, principal, family and tool-call id
 * from the bound identity context, then routes.
 */
export async function routedBrowserHandler(options: RoutedBrowserHandlerOptions): Promise<unknown> {
  const enabled = readFlags(options.flags).enabled;
  if (!options.broker || !enabled) return options.fallback();
  const bound = getBrowserControlIdentity();
  const explicit = options.identity ?? {};
  const identity: BrowserControlIdentity = {
    sessionId: pick(explicit.sessionId, bound.sessionId),
    taskId: pick(explicit.taskId, bound.taskId),
    principalId: pick(explicit.principalId, bound.principalId),
    transportFamily: pick(explicit.transportFamily, bound.transportFamily),
  };
  return routeBrowserTool({
    action: options.action,
    arguments: options.arguments,
    fallback: options.fallback,
    broker: options.broker,
    enabled,
    identity,
    toolCallId: pick(explicit.toolCallId, bound.toolCallId) ?? '',
    isEphemeralSession: options.isEphemeralSession,
    navigationUrlPolicy: options.navigationUrlPolicy,
  });
}

/**
 * Whether a bound extension controller can run `action` right now (tool availability while
 * assembling schemas). Any failure reads as false; the flag alone never advertises anything.
 */
export function extensionControllerAvailable(options: {
  readonly action: string;
  readonly broker: RouterBroker | undefined;
  readonly enabled: boolean;
  readonly identity: BrowserControlIdentity;
  readonly isEphemeralSession?: ((sessionOrTask: string) => boolean) | undefined;
}): boolean {
  try {
    const { identity, broker } = options;
    if (!options.enabled || !broker) return false;
    const sessionOrTask = present(identity.sessionId) ? identity.sessionId : identity.taskId;
    if (
      !present(sessionOrTask) ||
      !present(identity.principalId) ||
      !present(identity.transportFamily)
    ) {
      return false;
    }
    if (options.isEphemeralSession?.(sessionOrTask.trim()) === true) return false;
    const scope = broker.scopeForSession({
      sessionId: identity.sessionId,
      taskId: identity.taskId,
      principalId: identity.principalId,
      transportFamily: identity.transportFamily,
    });
    return scope !== null && broker.select(scope, options.action) !== null;
  } catch {
    return false;
  }
}
