import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it, vi } from 'vitest';
import {
  GATEWAY_KIND,
  RUNTIME_STATUS_FILE_NAME,
  RUNTIME_STATUS_STALE_AFTER_MS,
} from './constants.js';
import {
  isRuntimeStatusStale,
  normalizeUpdatedAt,
  type RuntimeStatusWriter,
  readRuntimeStatus,
  runtimeStatusPath,
  writeRuntimeStatus,
} from './runtime-status.js';

function writer(home: string, overrides: Partial<RuntimeStatusWriter> = {}): RuntimeStatusWriter {
  return {
    pid: 1111,
    argv: ['hermes', 'gateway', 'run'],
    startTime: 555,
    home,
    codeIdentity: { sha: 'aaa', version: '1.0.0' },
    now: () => Date.UTC(2026, 0, 2, 3, 4, 5),
    ...overrides,
  };
}

describe('writeRuntimeStatus', () => {
  it('creates a fresh record with the writer fields and the defaults', async () => {
    const home = await tempHome();
    await writeRuntimeStatus(home.path, {}, writer(home.path));
    expect(await readRuntimeStatus(home.path)).toEqual({
      kind: GATEWAY_KIND,
      pid: 1111,
      argv: ['hermes', 'gateway', 'run'],
      start_time: 555,
      hermes_home: home.path,
      gateway_state: 'starting',
      exit_reason: null,
      restart_requested: false,
      active_agents: 0,
      platforms: {},
      session_store: { status: 'unknown' },
      updated_at: '2026-01-02T03:04:05.000Z',
      code_sha: 'aaa',
      code_version: '1.0.0',
    });
  });

  it('writes compact JSON and replaces the file atomically', async () => {
    const home = await tempHome();
    await writeRuntimeStatus(home.path, { gatewayState: 'starting' }, writer(home.path));
    const before = await stat(runtimeStatusPath(home.path));
    await writeRuntimeStatus(home.path, { gatewayState: 'running' }, writer(home.path));
    const text = await readFile(runtimeStatusPath(home.path), 'utf8');
    expect(text).not.toMatch(/\n| {2}/);
    // A new file renamed over the old one, never the old file rewritten in place (which a reader
    // could catch empty or half-written), and no temp file left behind.
    expect((await stat(runtimeStatusPath(home.path))).ino).not.toBe(before.ino);
    expect(await readdir(home.path)).toEqual([RUNTIME_STATUS_FILE_NAME]);
  });

  it('re-stamps the writer on every write but keeps fields it was not given', async () => {
    const home = await tempHome();
    await writeRuntimeStatus(
      home.path,
      { gatewayState: 'running', activeAgents: 4, exitReason: 'x' },
      writer(home.path),
    );
    const next = writer(home.path, {
      pid: 2222,
      argv: ['hermes', 'gateway', 'restart'],
      startTime: 777,
      codeIdentity: { sha: 'bbb', version: '2.0.0' },
      now: () => Date.UTC(2026, 0, 2, 3, 5, 0),
    });
    const record = await writeRuntimeStatus(home.path, { restartRequested: true }, next);
    expect(record).toMatchObject({
      pid: 2222,
      argv: ['hermes', 'gateway', 'restart'],
      start_time: 777,
      code_sha: 'bbb',
      code_version: '2.0.0',
      updated_at: '2026-01-02T03:05:00.000Z',
      gateway_state: 'running',
      active_agents: 4,
      exit_reason: 'x',
      restart_requested: true,
    });
  });

  it('coerces active_agents to a non-negative integer and junk to 0', async () => {
    const home = await tempHome();
    const cases: [unknown, number][] = [
      ['3', 3],
      [2.7, 2],
      [-1, 0],
      ['junk', 0],
      [Number.POSITIVE_INFINITY, 0],
      [null, 0],
    ];
    for (const [input, expected] of cases) {
      const record = await writeRuntimeStatus(
        home.path,
        { activeAgents: input },
        writer(home.path),
      );
      expect(record.active_agents).toBe(expected);
    }
  });

  it('accepts only ok, unavailable and retrying as a session-store status', async () => {
    const home = await tempHome();
    const ok = await writeRuntimeStatus(home.path, { sessionStore: 'retrying' }, writer(home.path));
    expect(ok.session_store).toEqual({ status: 'retrying' });
    const junk = await writeRuntimeStatus(home.path, { sessionStore: 'melted' }, writer(home.path));
    expect(junk.session_store).toEqual({ status: 'unknown' });
  });

  it('stamps platform entries with their writer and drops profile keys on request', async () => {
    const home = await tempHome();
    const statusWriter = writer(home.path);
    await writeRuntimeStatus(
      home.path,
      { platform: { key: 'telegram', state: 'connected' } },
      statusWriter,
    );
    await writeRuntimeStatus(
      home.path,
      { platform: { key: 'work:slack', state: 'retrying' } },
      statusWriter,
    );
    await writeRuntimeStatus(
      home.path,
      { platform: { key: 'home:discord', state: 'fatal' } },
      statusWriter,
    );
    const record = await writeRuntimeStatus(
      home.path,
      { platform: { key: 'telegram', needsAttention: true, errorCode: 'E1' } },
      statusWriter,
    );
    expect(record.platforms).toMatchObject({
      telegram: {
        state: 'connected',
        needs_attention: true,
        error_code: 'E1',
        writer_pid: 1111,
        writer_start_time: 555,
        updated_at: '2026-01-02T03:04:05.000Z',
      },
    });
    const dropped = await writeRuntimeStatus(
      home.path,
      { dropProfilePlatforms: 'work' },
      statusWriter,
    );
    expect(Object.keys(dropped.platforms as object).sort()).toEqual(['home:discord', 'telegram']);
    const cleared = await writeRuntimeStatus(
      home.path,
      { clearProfilePlatforms: true },
      statusWriter,
    );
    expect(Object.keys(cleared.platforms as object)).toEqual(['telegram']);
  });

  it('loses no update when many writes race in one process', async () => {
    const home = await tempHome();
    const statusWriter = writer(home.path);
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        writeRuntimeStatus(
          home.path,
          { platform: { key: `p${index}`, state: 'connected' } },
          statusWriter,
        ),
      ),
    );
    const record = await readRuntimeStatus(home.path);
    expect(Object.keys(record?.platforms as object)).toHaveLength(20);
  });
});

describe('readRuntimeStatus', () => {
  it('tolerates a BOM and answers null for missing, invalid or non-object files', async () => {
    const home = await tempHome();
    expect(await readRuntimeStatus(home.path)).toBeNull();
    await writeFile(runtimeStatusPath(home.path), '\uFEFF{"pid":5}');
    expect(await readRuntimeStatus(home.path)).toEqual({ pid: 5 });
    for (const text of ['not json', '[1]', '3', '']) {
      await writeFile(runtimeStatusPath(home.path), text);
      expect(await readRuntimeStatus(home.path)).toBeNull();
    }
  });
});

describe('staleness', () => {
  const now = Date.UTC(2026, 5, 1, 12, 0, 0);

  it('parses ISO stamps with or without a zone (zone-less is UTC) and plausible epochs', () => {
    expect(normalizeUpdatedAt('2026-06-01T11:59:00Z', now)).toBe(now - 60_000);
    expect(normalizeUpdatedAt('2026-06-01T11:59:00', now)).toBe(now - 60_000);
    expect(normalizeUpdatedAt('2026-06-01T13:59:00+02:00', now)).toBe(now - 60_000);
    expect(normalizeUpdatedAt((now - 60_000) / 1000, now)).toBe(now - 60_000);
    expect(normalizeUpdatedAt(12, now)).toBeNull();
    expect(normalizeUpdatedAt(now / 1000 + 2 * 86_400, now)).toBeNull();
    expect(normalizeUpdatedAt(Number.NaN, now)).toBeNull();
    expect(normalizeUpdatedAt('yesterday', now)).toBeNull();
  });

  it('reads a zone-less stamp as UTC in every spelling, whatever the reader’s time zone', () => {
    // A reader east of UTC: a stamp read as local time would be 5 h 30 min early.
    vi.stubEnv('TZ', 'Asia/Kolkata');
    try {
      for (const stamp of [
        '2026-06-01T11:59:00',
        '2026-06-01 11:59:00',
        '2026-06-01 11:59:00.000000',
        '2026-06-01t11:59:00,0',
        '2026-06-01T11:59',
        '2026-06-01 13:59:00+02:00',
        '2026-06-01 13:59:00+0200',
        '2026-06-01T09:59:00-02',
        '2026-06-01T11:59:00z',
      ]) {
        expect(normalizeUpdatedAt(stamp, now), stamp).toBe(now - 60_000);
      }
      expect(normalizeUpdatedAt('2026-06-01', now)).toBe(Date.UTC(2026, 5, 1));
      expect(normalizeUpdatedAt('2026-06-01 11:59:00.123456', now)).toBe(now - 60_000 + 123);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('refuses stamps that are not ISO-8601 or name an impossible time', () => {
    for (const stamp of [
      '2026-02-30T00:00:00',
      '2026-06-01T24:00:00',
      '2026-06-01T12:60:00',
      '2026-06-01T12:00:00+25:00',
      'June 1, 2026 11:59',
      '1780315140',
      '',
    ]) {
      expect(normalizeUpdatedAt(stamp, now), stamp).toBeNull();
    }
  });

  it('calls a record stale after 120 s or without a usable stamp', () => {
    const at = (ms: number) => ({ updated_at: new Date(ms).toISOString() });
    expect(isRuntimeStatusStale(at(now - RUNTIME_STATUS_STALE_AFTER_MS + 1000), now)).toBe(false);
    expect(isRuntimeStatusStale(at(now - RUNTIME_STATUS_STALE_AFTER_MS - 1000), now)).toBe(true);
    expect(isRuntimeStatusStale({}, now)).toBe(true);
  });
});
