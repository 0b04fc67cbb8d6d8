import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { TRANSPORT_FAMILY_LOCAL_API, TRANSPORT_FAMILY_REMOTE_API } from '../constants.js';

/**
 * The API-server principal: `principal:<profile>:` + the first 32 hex of
 * SHA-256("<profile>\0<expected API key>"). Derived from server state only, so a client can neither
 * choose nor spoof it, and it is stable across reconnects with the same key.
 */
export function deriveApiPrincipal(options: { profile: string; apiKey: string }): string {
  const digest = createHash('sha256')
    .update(`${options.profile}\0${options.apiKey}`, 'utf8')
    .digest('hex');
  return `principal:${options.profile}:${digest.slice(0, 32)}`;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** `local-api` for a loopback peer (an IPv4-mapped `::ffff:127.0.0.1` included), else `remote-api`. */
export function transportFamilyForPeer(address: string | undefined): string {
  const host = (address ?? '').replace(/^::ffff:/i, '').toLowerCase();
  return LOOPBACK.has(host) ? TRANSPORT_FAMILY_LOCAL_API : TRANSPORT_FAMILY_REMOTE_API;
}

/** Constant-time check of an `Authorization: Bearer <key>` header against the expected key. */
export function bearerMatches(header: string | undefined | null, expected: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  const presented = match?.[1]?.trim() ?? '';
  // Hash both sides so the comparison length never depends on the secret.
  const left = createHash('sha256').update(presented, 'utf8').digest();
  const right = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(left, right) && presented !== '';
}

/** The TCP peer of a request served by `@hono/node-server` (its `incoming` binding). */
export function nodePeerAddress(context: Context): string | undefined {
  const environment = context.env as { incoming?: IncomingMessage } | undefined;
  return environment?.incoming?.socket?.remoteAddress;
}
