import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';

/** Dynamic routes, re-read when the file's modification time changes. */
export const WEBHOOK_SUBSCRIPTIONS_FILE = 'webhook_subscriptions.json';
export const DEFAULT_WEBHOOK_RATE_LIMIT = 30;

const routeSchema = v.object({
  secret: v.optional(v.string()),
  /** The name of the variable (in the profile's `.env`) that holds the secret. */
  secret_env: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'secret_env must name an environment variable'),
    ),
  ),
  enabled: v.optional(v.boolean(), true),
  /** Absent: the profile whose config declares it. null, blank or not a string: never reachable. */
  profile: v.optional(v.unknown()),
  events: v.optional(v.array(v.string())),
  prompt: v.optional(v.string()),
  deliver: v.optional(v.picklist(['log', 'telegram']), 'log'),
  deliver_extra: v.optional(v.object({ chat_id: v.optional(v.union([v.string(), v.number()])) })),
  deliver_only: v.optional(v.boolean(), false),
  rate_limit: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1)),
    DEFAULT_WEBHOOK_RATE_LIMIT,
  ),
});

export interface WebhookRoute {
  readonly name: string;
  readonly secret: string | undefined;
  readonly enabled: boolean;
  /** The profile the route is bound to; `null` when its `profile` key can never match. */
  readonly profile: string | null;
  readonly events: readonly string[] | undefined;
  readonly prompt: string | undefined;
  readonly deliver: 'log' | 'telegram';
  readonly deliverChatId: string | undefined;
  readonly deliverOnly: boolean;
  readonly rateLimit: number;
  /** From `webhook_subscriptions.json` (an INSECURE_NO_AUTH secret is honoured from loopback only). */
  readonly dynamic: boolean;
}

interface ParseOptions {
  readonly dynamic: boolean;
  readonly owner: string;
  readonly warn: (message: string) => void;
  /** The declaring profile's secrets (its `.env`), for `secret_env`. */
  readonly secret: (name: string) => string | undefined;
}

/**
 * A route's secret: `secret` as written, or the variable `secret_env` names. Unset, the route has
 * no secret and every delivery to it is refused (403) — never taken unsigned.
 */
function routeSecret(
  name: string,
  route: { readonly secret?: string | undefined; readonly secret_env?: string | undefined },
  options: ParseOptions,
): string | undefined {
  if (route.secret_env === undefined) return route.secret;
  const value = options.secret(route.secret_env);
  if (value === undefined || value === '')
    options.warn(
      `webhook route ${name}: secret_env ${route.secret_env} is not set (put it in the profile's .env); deliveries to it are refused until it is`,
    );
  return value === '' ? undefined : value;
}

function parseRoutes(value: unknown, options: ParseOptions): Map<string, WebhookRoute> {
  const routes = new Map<string, WebhookRoute>();
  if (value === undefined || value === null) return routes;
  if (typeof value !== 'object' || Array.isArray(value)) {
    options.warn('webhook routes must be a mapping of route name to route; ignored');
    return routes;
  }
  for (const [name, raw] of Object.entries(value)) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
      options.warn(
        `webhook route name ${JSON.stringify(name)} is not [A-Za-z0-9_-]{1,64}; ignored`,
      );
      continue;
    }
    const parsed = v.safeParse(routeSchema, raw);
    if (!parsed.success) {
      options.warn(`webhook route ${name}: ${parsed.issues[0]?.message ?? 'invalid'}; ignored`);
      continue;
    }
    const route = parsed.output;
    if (route.secret !== undefined && route.secret_env !== undefined) {
      options.warn(
        `webhook route ${name}: set secret or secret_env, not both (which one signs is ambiguous); ignored`,
      );
      continue;
    }
    const hasProfile = raw !== null && typeof raw === 'object' && 'profile' in raw;
    const profile = !hasProfile
      ? options.owner
      : typeof route.profile === 'string' && route.profile.trim() !== ''
        ? route.profile.trim()
        : null;
    routes.set(name, {
      name,
      secret: routeSecret(name, route, options),
      enabled: route.enabled,
      profile,
      events: route.events,
      prompt: route.prompt,
      deliver: route.deliver,
      deliverChatId:
        route.deliver_extra?.chat_id === undefined
          ? undefined
          : String(route.deliver_extra.chat_id),
      deliverOnly: route.deliver_only,
      rateLimit: route.rate_limit,
      dynamic: options.dynamic,
    });
  }
  return routes;
}

/**
 * The webhook routes: `platforms.webhook.routes` from `config.yaml` plus the dynamic ones in
 * `<home>/webhook_subscriptions.json` (`{ "routes": { … } }` or the mapping itself), re-read only
 * when that file's modification time changes. A config route wins over a dynamic one of the same name.
 */
export class WebhookRoutes {
  readonly #static: Map<string, WebhookRoute>;
  readonly #file: string;
  readonly #owner: string;
  readonly #warn: (message: string) => void;
  readonly #secret: (name: string) => string | undefined;
  #dynamic = new Map<string, WebhookRoute>();
  #mtimeMs: number | undefined;

  constructor(options: {
    home: string;
    configured: unknown;
    /** The profile whose config declares the routes: a route without `profile:` is bound to it. */
    owner: string;
    warn: (message: string) => void;
    /** The declaring profile's secrets (its `.env`, never the process environment under multiplexing). */
    secret: (name: string) => string | undefined;
  }) {
    this.#file = path.join(options.home, WEBHOOK_SUBSCRIPTIONS_FILE);
    this.#owner = options.owner;
    this.#warn = options.warn;
    this.#secret = options.secret;
    this.#static = parseRoutes(options.configured, {
      dynamic: false,
      owner: options.owner,
      warn: options.warn,
      secret: options.secret,
    });
  }

  async reload(): Promise<void> {
    let mtimeMs: number | undefined;
    try {
      mtimeMs = (await stat(this.#file)).mtimeMs;
    } catch {
      mtimeMs = undefined;
    }
    if (mtimeMs === this.#mtimeMs) return;
    this.#mtimeMs = mtimeMs;
    if (mtimeMs === undefined) {
      this.#dynamic = new Map();
      return;
    }
    try {
      const document = JSON.parse(await readFile(this.#file, 'utf8')) as unknown;
      const mapping =
        document && typeof document === 'object' && 'routes' in document
          ? (document as { routes: unknown }).routes
          : document;
      this.#dynamic = parseRoutes(mapping, {
        dynamic: true,
        owner: this.#owner,
        warn: this.#warn,
        secret: this.#secret,
      });
    } catch (error) {
      this.#warn(
        `${WEBHOOK_SUBSCRIPTIONS_FILE} could not be read (${error instanceof Error ? error.message : String(error)}); dynamic routes cleared`,
      );
      this.#dynamic = new Map();
    }
  }

  get(name: string): WebhookRoute | undefined {
    return this.#static.get(name) ?? this.#dynamic.get(name);
  }
}

/**
 * A payload whose compact JSON is longer than this is quoted compact: indenting a deeply nested
 * one can multiply its size many times over (64 levels of two spaces before every value).
 */
export const PRETTY_PAYLOAD_MAX_CHARS = 16 * 1024;

/** The payload as a prompt quotes it: indented, unless that would make a large one larger. */
export function payloadJson(payload: unknown): string {
  const compact = JSON.stringify(payload) ?? 'null';
  return compact.length > PRETTY_PAYLOAD_MAX_CHARS ? compact : JSON.stringify(payload, null, 2);
}

/** `{payload.a.b}`, `{event}`, `{route}`, `{payload}` (the whole payload as JSON). */
export function renderPrompt(
  template: string | undefined,
  input: { route: string; event: string | undefined; payload: unknown },
): string {
  const json = payloadJson(input.payload);
  if (template === undefined)
    return `Webhook ${input.route}${input.event ? ` (${input.event})` : ''} received:\n\`\`\`json\n${json}\n\`\`\``;
  return template.replace(/\{([A-Za-z0-9_.-]+)\}/g, (whole, key: string) => {
    if (key === 'route') return input.route;
    if (key === 'event') return input.event ?? '';
    if (key === 'payload') return json;
    if (!key.startsWith('payload.')) return whole;
    let value: unknown = input.payload;
    for (const part of key.slice('payload.'.length).split('.')) {
      if (value === null || typeof value !== 'object') return '';
      value = (value as Record<string, unknown>)[part];
    }
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
