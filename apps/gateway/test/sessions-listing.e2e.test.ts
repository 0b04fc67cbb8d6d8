import path from 'node:path';
import { openSessionStore } from '@hermes/session-store';
import { describe, expect, it, onTestFinished } from 'vitest';
import { type StartedGateway, startGateway } from './gateway-process.js';

interface ListBody {
  data: { id: string; title: string | null; pinned: boolean }[];
  limit: number;
  offset: number;
  has_more: boolean;
}

async function list(gateway: StartedGateway, query = '', etag?: string) {
  const response = await gateway.request(
    `/api/sessions${query}`,
    etag ? { headers: { 'if-none-match': etag } } : {},
  );
  const text = await response.text();
  return {
    status: response.status,
    etag: response.headers.get('etag'),
    cacheControl: response.headers.get('cache-control'),
    text,
    body: (text === '' ? undefined : JSON.parse(text)) as ListBody | undefined,
  };
}

async function create(gateway: StartedGateway, title: string): Promise<string> {
  const created = await gateway.json<{ session: { id: string } }>('/api/sessions', {
    method: 'POST',
    json: { title },
  });
  expect(created.status).toBe(201);
  return created.body.session.id;
}

describe('GET /api/sessions: rendered pages, ETag and 304', () => {
  it('answers a strong ETag, 304 for a matching If-None-Match (a list, weak or *), and the same tag for the same listing after a restart', async () => {
    const gateway = await startGateway();
    await create(gateway, 'first chat');
    const first = await list(gateway);
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(first.cacheControl).toBe('private, no-cache');
    expect(first.body?.data.map((session) => session.title)).toEqual(['first chat']);
    const etag = first.etag as string;

    const again = await list(gateway);
    expect(again.etag).toBe(etag);
    expect(again.text).toBe(first.text);
    for (const header of [etag, `W/${etag}`, `"elsewhere", ${etag}`, '*']) {
      const notModified = await list(gateway, '', header);
      expect(notModified.status, header).toBe(304);
      expect(notModified.text).toBe('');
      expect(notModified.etag).toBe(etag);
    }
    const other = await list(gateway, '', '"elsewhere"');
    expect(other.status).toBe(200);
    expect(other.text).toBe(first.text);
    // Another query is another page with its own tag.
    const paged = await list(gateway, '?limit=1', etag);
    expect(paged.status).toBe(200);
    expect(paged.etag).not.toBe(etag);

    // The tag names the bytes, not the process: the same listing after a restart still matches.
    gateway.process.kill('SIGTERM');
    expect((await gateway.process.exited).code).toBe(0);
    const restarted = await startGateway({ home: gateway.home });
    expect((await list(restarted, '', etag)).status).toBe(304);
  }, 60_000);

  it('shows what another process writes to the store on the next GET, and a stale tag gets the new page', async () => {
    const gateway = await startGateway();
    const ours = await create(gateway, 'ours');
    const before = await list(gateway);
    expect(before.body?.data.map((session) => session.id)).toEqual([ours]);
    // Served from the rendered page now.
    expect((await list(gateway, '', before.etag ?? '')).status).toBe(304);

    // A second handle on the same state.db in this (another) process.
    const outside = await openSessionStore({ path: path.join(gateway.home, 'state.db') });
    onTestFinished(() => outside.close());
    await outside.createSession({ id: 'made-elsewhere', source: 'api_server', title: 'elsewhere' });

    const after = await list(gateway, '', before.etag ?? '');
    expect(after.status).toBe(200);
    expect(after.body?.data.map((session) => session.id).sort()).toEqual(
      ['made-elsewhere', ours].sort(),
    );
    expect(after.etag).not.toBe(before.etag);

    // A change to a row already on the page (no new row) shows too.
    await outside.setPinned(ours, true);
    const pinned = await list(gateway, '', after.etag ?? '');
    expect(pinned.status).toBe(200);
    expect(pinned.body?.data.find((session) => session.id === ours)?.pinned).toBe(true);
    await outside.setTitle('made-elsewhere', 'renamed elsewhere', { source: 'user' });
    expect(
      (await list(gateway)).body?.data.find((session) => session.id === 'made-elsewhere')?.title,
    ).toBe('renamed elsewhere');
  }, 60_000);

  it('shows the gateway’s own writes (create, patch, delete) on the next GET', async () => {
    const gateway = await startGateway();
    const id = await create(gateway, 'one');
    const first = await list(gateway);
    const second = await create(gateway, 'two');
    const created = await list(gateway, '', first.etag ?? '');
    expect(created.status).toBe(200);
    expect(created.body?.data.map((session) => session.title)).toEqual(['two', 'one']);
    const patched = await gateway.request(`/api/sessions/${id}`, {
      method: 'PATCH',
      json: { title: 'one renamed' },
    });
    expect(patched.status).toBe(200);
    expect((await list(gateway)).body?.data.map((session) => session.title)).toEqual([
      'two',
      'one renamed',
    ]);
    expect((await gateway.request(`/api/sessions/${second}`, { method: 'DELETE' })).status).toBe(
      200,
    );
    expect((await list(gateway)).body?.data.map((session) => session.title)).toEqual([
      'one renamed',
    ]);
  }, 60_000);

  it('keeps each page and filter apart: offset pages cover every session once, a title filter its own rows', async () => {
    const gateway = await startGateway();
    const titles = ['a', 'b', 'c', 'd', 'e'];
    for (const title of titles) await create(gateway, title);
    const pageTitles = async (query: string) =>
      (await list(gateway, query)).body?.data.map((session) => session.title);
    const pages = async () => [
      await pageTitles('?limit=2'),
      await pageTitles('?limit=2&offset=2'),
      await pageTitles('?limit=2&offset=4'),
      await pageTitles('?title=c'),
      await pageTitles(''),
    ];
    const expected = [['e', 'd'], ['c', 'b'], ['a'], ['c'], ['e', 'd', 'c', 'b', 'a']];
    expect(await pages()).toEqual(expected);
    // The second pass is served from the rendered pages: the same answers, each its own.
    expect(await pages()).toEqual(expected);
    const tail = await list(gateway, '?limit=2&offset=4');
    expect(tail.body).toMatchObject({ limit: 2, offset: 4, has_more: false });
    expect((await list(gateway, '?limit=2&offset=2')).body?.has_more).toBe(true);
  }, 60_000);
});
