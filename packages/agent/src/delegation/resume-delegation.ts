import { resolveFallbackProviders } from '@hermes/config';
import type { Agent } from '../loop/agent-types.js';
import { endpointOf } from '../model/endpoint-url.js';
import type { AsyncUnit, ResumeUnitRequest } from './async-unit.js';
import { makeUnit, ownerKey, unitBatchOptions } from './background-unit.js';
import { type BuiltChild, buildChildren } from './build-children.js';
import {
  type DelegationResumeSpec,
  type ResumableTaskRecord,
  resumedSlotKey,
} from './completion-event.js';
import type { DelegationCredentialsConfig } from './delegate-task.js';
import { CREDENTIALS_ROUTING_OWNER as OWNER } from './delegation-limits.js';
import type { DelegationTask } from './normalize-tasks.js';
import {
  type DelegationRoutingConfig,
  delegationRouting,
  resolveChildRuntime,
} from './resolve-child-runtime.js';

const KEY_FIELDS = ['api_key', 'apiKey'];
/** Marks a stored fallback entry whose own key was left out (it is looked up again on resume). */
const KEY_LEFT_OUT = 'had_api_key';

function isMapping(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A fallback entry as the ledger may hold it: its own key left out, and marked if it had one. */
function withoutKey(entry: unknown): unknown {
  if (!isMapping(entry)) return entry;
  const kept = Object.entries(entry).filter(([key]) => !KEY_FIELDS.includes(key));
  const hadKey = KEY_FIELDS.some((key) => {
    const value = entry[key];
    return value !== undefined && value !== null && String(value).trim() !== '';
  });
  return Object.fromEntries(hadKey ? [...kept, [KEY_LEFT_OUT, true]] : kept);
}

/** What another process needs to run a unit again (no secrets: keys come from the live config). */
export function resumeSpec(
  parent: Agent,
  input: {
    children: readonly BuiltChild[];
    credentialsCfg: DelegationCredentialsConfig | null | undefined;
    fallbackProviders: readonly unknown[] | undefined;
    sessionId: string | undefined;
    cwd: string;
    /** The capacity slot of the call the unit belongs to (its delegation id). */
    slotKey: string;
  },
): DelegationResumeSpec {
  const credentials = input.credentialsCfg;
  return {
    tasks: input.children.map(
      ({ task }): ResumableTaskRecord => ({
        goal: task.goal,
        context: task.context,
        ...(task.outputSchema ? { output_schema: task.outputSchema } : {}),
        ...(task.images ? { images: task.images } : {}),
        ...(task.group !== undefined ? { group: task.group } : {}),
      }),
    ),
    credentials: credentials
      ? {
          provider: credentials.provider,
          model: credentials.model,
          baseUrl: credentials.baseUrl,
          apiMode: credentials.apiMode,
          hadApiKey: credentials.apiKey !== '',
        }
      : null,
    fallback_providers: credentials ? (input.fallbackProviders ?? []).map(withoutKey) : [],
    session_id: input.sessionId ?? null,
    cwd: input.cwd,
    platform: parent.platform,
    model: parent.config.model.model,
    slot_key: input.slotKey,
  };
}

/** Where a key is sent: a provider and a base URL (the model plays no part). */
interface Endpoint {
  readonly provider: string;
  readonly baseUrl: string;
}

/** The same endpoint: the same provider (`auto` = none) and base URL (as `endpointOf` compares them). */
function sameEndpoint(left: Endpoint, right: Endpoint): boolean {
  const provider = (value: string) => (value.trim().toLowerCase() === 'auto' ? '' : value.trim());
  return (
    provider(left.provider) === provider(right.provider) &&
    endpointOf(left.baseUrl) === endpointOf(right.baseUrl)
  );
}

/**
 * The key a resumed unit's pinned route runs with: the live `auxiliary.review` key when that block
 * still names the same endpoint — provider and base URL; a key belongs to its endpoint, so a
 * changed model keeps it (the ledger never holds keys) — else none: a named provider's own secret
 * then applies, as for any route without a key. A route with an endpoint of its own (`base_url`)
 * that had its own key is refused instead: without a key it would borrow the agent's, and that
 * key must never go to an endpoint it was not configured for.
 */
function liveRouteKey(
  parent: Agent,
  credentials: NonNullable<DelegationResumeSpec['credentials']>,
): string {
  if (!credentials.hadApiKey) return '';
  const live = parent.config.auxiliary.review;
  const key = sameEndpoint(live, credentials) ? live.apiKey : '';
  if (key === '' && credentials.baseUrl !== '')
    throw new Error(
      `${OWNER} no longer holds the API key of its endpoint ${credentials.baseUrl}; the agent's own key is not sent there`,
    );
  return key;
}

/**
 * The fallback chain a resumed unit's pinned route runs with: its stored entries, each that had a
 * key of its own given the key of the first live `auxiliary.review.fallback_providers` entry naming
 * the same endpoint (provider and base URL), as the route's own key is found. An entry with its
 * own `base_url` whose key the live chain no longer holds is dropped with a warning — it would
 * otherwise run without the key it was dispatched with (no other endpoint's key goes to its
 * `base_url`), and a backup that cannot be used never stops the unit, as at dispatch; a named
 * provider's entry keeps that provider's own secret.
 */
function liveFallbackChain(
  parent: Agent,
  stored: readonly unknown[],
  warn: (message: string) => void,
): unknown[] {
  const ignore = () => {};
  const live = resolveFallbackProviders(
    parent.config.auxiliary.review.fallbackProviders ?? [],
    `${OWNER}.fallback_providers`,
    ignore,
  );
  const chain: unknown[] = [];
  for (const [index, entry] of stored.entries()) {
    if (!isMapping(entry) || entry[KEY_LEFT_OUT] !== true) {
      chain.push(entry);
      continue;
    }
    const { [KEY_LEFT_OUT]: _marker, ...rest } = entry;
    const [endpoint] = resolveFallbackProviders([rest], `${OWNER}.fallback_providers`, ignore);
    const key = endpoint
      ? live.find((candidate) => candidate.apiKey !== '' && sameEndpoint(candidate, endpoint))
          ?.apiKey
      : undefined;
    if (key) chain.push({ ...rest, api_key: key });
    else if (!endpoint?.baseUrl) chain.push(rest);
    else
      warn(
        `${OWNER}.fallback_providers[${index}] (${endpoint.baseUrl}) dropped: the live ${OWNER} no longer holds its API key; the agent's own key is not sent there`,
      );
  }
  return chain;
}

/**
 * Rebuilds a resumable unit from its ledger record so it can run again after its process stopped:
 * the same delegation id, origin and session binding, task indexes and subagent ids, fresh child
 * agents and sessions. `parent` is an agent of the same profile (its tools, config and registry).
 * Throws an `Error` whose message says why the unit cannot run again.
 */
export async function resumeDelegation(
  request: ResumeUnitRequest,
  options: { readonly parent: Agent },
): Promise<AsyncUnit> {
  const { parent } = options;
  const registry = parent.options.delegations;
  if (!registry) throw new Error('the agent has no delegation registry');
  const spec = request.task.resume;
  if (!spec || spec.tasks.length === 0) throw new Error('the ledger holds no task to run again');
  const warn = (message: string) =>
    registry.report({ type: 'warning', message: `delegation ${request.delegationId}: ${message}` });
  // Only a per-call owner is stored (keys left out); the `delegation` section is read live whole.
  const routing: DelegationRoutingConfig = spec.credentials
    ? {
        provider: spec.credentials.provider,
        model: spec.credentials.model,
        baseUrl: spec.credentials.baseUrl,
        apiMode: spec.credentials.apiMode,
        apiKey: liveRouteKey(parent, spec.credentials),
        fallbackProviders: liveFallbackChain(parent, spec.fallback_providers, warn),
        where: OWNER,
      }
    : delegationRouting(parent.config.delegation);
  const runtime = resolveChildRuntime(parent, routing);
  if ('error' in runtime) throw new Error(runtime.error);
  for (const warning of runtime.warnings) warn(warning);
  const tasks: DelegationTask[] = spec.tasks.map((task) => ({
    goal: task.goal,
    context: task.context,
    ...(task.output_schema ? { outputSchema: task.output_schema } : {}),
    ...(task.images ? { images: task.images } : {}),
    ...(task.group !== undefined ? { group: task.group } : {}),
  }));
  const sessionId = spec.session_id ?? undefined;
  const built = await buildChildren({
    parent,
    tasks,
    runtime,
    parentSessionId: request.origin.parentSessionId ?? undefined,
    cwd: spec.cwd,
  });
  // The same task indexes and subagent ids as the run that stopped: the completion reads as one unit.
  const children = built.map((child, position) => ({
    ...child,
    taskIndex: request.task.task_indexes[position] ?? child.taskIndex,
    subagentId: request.task.subagent_ids[position] ?? child.subagentId,
  }));
  const batchOptions = await unitBatchOptions(parent, {
    tracker: registry.subagents,
    owner: ownerKey(parent, sessionId),
    sessionId,
    runtime,
  });
  return makeUnit({
    unitId: request.delegationId,
    slotKey: resumedSlotKey(request.delegationId, request.task),
    children,
    group: request.task.group,
    origin: request.origin,
    registry,
    batchOptions,
    task: request.task,
  });
}
