import { createHash } from 'node:crypto';
import type { SessionStore } from '@hermes/session-store';

/** Rendered pages kept per store (per profile); the least recently served is dropped first. */
export const RENDERED_PAGES_PER_STORE = 32;

export interface RenderedPage {
  /** The store's `contentVersion()` read before the page was rendered. */
  readonly version: string;
  /** The JSON text sent. */
  readonly body: string;
  /** A strong entity tag: a hash of `body`, so it is the same for the same bytes across restarts. */
  readonly etag: string;
}

export interface PageRender {
  readonly value: unknown;
  /** False for a page that must be rendered afresh every time (it may change without a write). */
  readonly cacheable: boolean;
}

/**
 * Rendered JSON pages of a store, each keyed by its validated query and valid while the store's
 * `contentVersion()` is unchanged — any commit, by this process or another one, changes it. The
 * version is read before rendering, so a page holds at least what its version names: a commit
 * landing while it renders only makes the next request render again.
 */
export class RenderedPageCache {
  readonly #stores = new WeakMap<SessionStore, Map<string, RenderedPage>>();
  readonly #maxEntries: number;

  constructor(maxEntries = RENDERED_PAGES_PER_STORE) {
    this.#maxEntries = maxEntries;
  }

  async page(
    store: SessionStore,
    key: string,
    render: () => PageRender | Promise<PageRender>,
  ): Promise<RenderedPage> {
    const version = store.contentVersion();
    let pages = this.#stores.get(store);
    if (!pages) {
      pages = new Map();
      this.#stores.set(store, pages);
    }
    const hit = pages.get(key);
    if (hit && hit.version === version) {
      pages.delete(key);
      pages.set(key, hit);
      return hit;
    }
    const rendered = await render();
    const body = JSON.stringify(rendered.value);
    const page: RenderedPage = { version, body, etag: entityTag(body) };
    pages.delete(key);
    if (rendered.cacheable) {
      pages.set(key, page);
      for (const oldest of pages.keys()) {
        if (pages.size <= this.#maxEntries) break;
        pages.delete(oldest);
      }
    }
    return page;
  }
}

/** A strong `ETag` for these bytes. */
export function entityTag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/**
 * Whether an `If-None-Match` header names `etag` (RFC 9110 §13.1.2: `*`, or a list compared
 * weakly, so `W/"x"` matches `"x"`).
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = header.trim();
  if (value === '*') return true;
  for (const candidate of value.split(',')) {
    const tag = candidate.trim();
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}
