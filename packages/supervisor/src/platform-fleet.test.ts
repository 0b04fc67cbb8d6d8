import { describe, expect, it } from 'vitest';
import type {
  AdapterFatalError,
  ConnectOptions,
  PlatformAdapter,
  SendResult,
} from './platform-adapter.js';
import {
  type AdapterHooks,
  createPlatformFleet,
  type PlatformFleetOptions,
} from './platform-fleet.js';
import { scaledClock } from './scaled-clock.js';
import { createRecordingLogger } from './test-clock.js';

/**
 * A stand-in for a remote platform: `up` decides whether a connect succeeds, `fatalOnConnect`
 * what a failed connect reports. Each connect builds a fresh adapter, as the fleet requires.
 */
class FakePlatform {
  up = true;
  fatalOnConnect: AdapterFatalError = {
    code: 'network_error',
    message: 'ECONNREFUSED',
    retryable: true,
  };
  connectDelayMs = 0;
  /** Connects that succeed and then drop at once (the adapter reports a fatal in the same turn). */
  dropsRightAfterConnect = 0;
  readonly connects: boolean[] = [];
  readonly adapters: FakeAdapter[] = [];
  constructor(readonly name: string) {}
  create(hooks: AdapterHooks): FakeAdapter {
    const adapter = new FakeAdapter(this, hooks);
    this.adapters.push(adapter);
    return adapter;
  }
}

class FakeAdapter implements PlatformAdapter {
  fatalError: AdapterFatalError | undefined;
  disconnected = false;
  constructor(
    readonly remote: FakePlatform,
    readonly hooks: AdapterHooks,
  ) {}
  get platform() {
    return this.remote.name;
  }
  async connect(options: ConnectOptions): Promise<boolean> {
    this.remote.connects.push(options.isReconnect);
    if (this.remote.connectDelayMs > 0)
      await new Promise((resolve) => setTimeout(resolve, this.remote.connectDelayMs));
    if (this.remote.up) {
      if (this.remote.dropsRightAfterConnect > 0) {
        this.remote.dropsRightAfterConnect -= 1;
        queueMicrotask(() =>
          this.fail({ code: 'network_error', message: 'dropped at once', retryable: true }),
        );
      }
      return true;
    }
    this.fatalError = this.remote.fatalOnConnect;
    return false;
  }
  async disconnect() {
    this.disconnected = true;
  }
  async send(): Promise<SendResult> {
    return { success: true, messageId: '1' };
  }
  fail(error: AdapterFatalError) {
    this.fatalError = error;
    this.hooks.reportFatal(error);
  }
}

const SCALE = 0.001; // 30 s of backoff pass in 30 ms

function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (condition()) resolve();
      else if (Date.now() - started > timeoutMs) reject(new Error('condition not met in time'));
      else setTimeout(tick, 5);
    };
    tick();
  });
}

function setup(
  remotes: FakePlatform[],
  extra: Partial<PlatformFleetOptions<{ name: string }>> = {},
) {
  const logger = createRecordingLogger();
  const connectedEvents: { platform: string; isReconnect: boolean }[] = [];
  const lost: string[] = [];
  const noneLeft: { retryable: boolean; reason: string }[] = [];
  let watcherSpawns = 0;
  const byName = new Map(remotes.map((remote) => [remote.name, remote]));
  const fleet = createPlatformFleet<{ name: string }>({
    platforms: new Map(remotes.map((remote) => [remote.name, { name: remote.name }])),
    createAdapter: (platform, _config, hooks) => byName.get(platform)?.create(hooks),
    onConnected: (platform, _adapter, info) => connectedEvents.push({ platform, ...info }),
    onPlatformLost: (event) => lost.push(event.platform),
    onNoAdaptersLeft: (event) => noneLeft.push(event),
    onWatcherSpawn: () => {
      watcherSpawns += 1;
    },
    clock: scaledClock(SCALE),
    timeScale: SCALE,
    logger,
    ...extra,
  });
  return { fleet, logger, connectedEvents, lost, noneLeft, watcherSpawns: () => watcherSpawns };
}

describe('platform fleet', () => {
  it('connects every platform concurrently and classifies connected, queued and fatal', async () => {
    const telegram = new FakePlatform('telegram');
    const slack = new FakePlatform('slack');
    const discord = new FakePlatform('discord');
    telegram.up = false;
    discord.up = false;
    discord.fatalOnConnect = { code: 'unauthorized', message: 'bad token', retryable: false };
    for (const remote of [telegram, slack, discord]) remote.connectDelayMs = 50;
    const { fleet, connectedEvents } = setup([telegram, slack, discord], {
      connectTimeoutS: () => 1000, // 1 s at this scale
    });
    const started = performance.now();
    const summary = await fleet.start();
    // Concurrent: three 50 ms connects take well under 150 ms together.
    expect(performance.now() - started).toBeLessThan(140);
    expect(summary).toMatchObject({ connected: ['slack'], queued: ['telegram'], onlyFatal: false });
    expect(summary.fatal.map((f) => [f.platform, f.error.code])).toEqual([
      ['discord', 'unauthorized'],
    ]);
    expect(connectedEvents).toEqual([{ platform: 'slack', isReconnect: false }]);
    expect(telegram.connects).toEqual([false]);
    // The never-installed adapters were disposed of.
    expect(telegram.adapters[0]?.disconnected).toBe(true);
    expect(discord.adapters[0]?.disconnected).toBe(true);
    const states = Object.fromEntries(fleet.status().map((s) => [s.platform, s.state]));
    expect(states).toEqual({ telegram: 'retrying', slack: 'connected', discord: 'fatal' });
    await fleet.stop();
  });

  it('reports onlyFatal when nothing connected and every failure is non-retryable', async () => {
    const discord = new FakePlatform('discord');
    discord.up = false;
    discord.fatalOnConnect = { code: 'unauthorized', message: 'bad token', retryable: false };
    const { fleet } = setup([discord]);
    expect((await fleet.start()).onlyFatal).toBe(true);
    await fleet.stop();
  });

  it('a connect that outlives its budget is detached and the platform queued', async () => {
    const telegram = new FakePlatform('telegram');
    telegram.connectDelayMs = 10_000;
    const { fleet } = setup([telegram], { connectTimeoutS: () => 45 }); // 45 ms at this scale
    const summary = await fleet.start();
    expect(summary.queued).toEqual(['telegram']);
    expect(fleet.status()[0]).toMatchObject({ errorCode: 'connect_timeout' });
    expect(fleet.status()[0]?.errorMessage).toMatch(/telegram connect timed out after 45s/);
    await fleet.stop();
  });

  it('queues a retryable runtime failure, keeps the other adapter, and reconnects with isReconnect once the platform is back — after many failed attempts, one watcher', async () => {
    const telegram = new FakePlatform('telegram');
    const webhook = new FakePlatform('webhook');
    const { fleet, connectedEvents, lost, noneLeft, watcherSpawns } = setup([telegram, webhook]);
    await fleet.start();
    const first = fleet.adapter('telegram') as FakeAdapter;
    telegram.up = false;
    first.fail({ code: 'network_error', message: 'ECONNREFUSED', retryable: true });
    await until(() => first.disconnected);
    expect(fleet.queue.has('telegram')).toBe(true);
    expect(fleet.adapter('telegram')).toBeUndefined();
    expect(fleet.adapter('webhook')).toBeDefined();
    // Down for longer than a supervised task's whole budget (1+2+4+8+16 = 31 s): here 5 attempts
    // of the reconnect backoff, 30+60+120+240+300 s.
    await until(() => (fleet.queue.get('telegram')?.attempts ?? 0) >= 5, 10_000);
    expect(fleet.status().find((s) => s.platform === 'telegram')).toMatchObject({
      state: 'retrying',
      paused: false,
    });
    telegram.up = true;
    await until(() => fleet.adapter('telegram') !== undefined, 10_000);
    expect(fleet.queue.has('telegram')).toBe(false);
    expect(telegram.connects[0]).toBe(false);
    expect(telegram.connects.slice(1).every((isReconnect) => isReconnect)).toBe(true);
    expect(connectedEvents.at(-1)).toEqual({ platform: 'telegram', isReconnect: true });
    // Failed attempts are answers, not crashes: one watcher lifetime, nobody exited.
    expect(watcherSpawns()).toBe(1);
    expect(lost).toEqual([]);
    expect(noneLeft).toEqual([]);
    expect(fleet.status().find((s) => s.platform === 'telegram')).toMatchObject({
      state: 'connected',
      reconnects: 1,
    });
    await fleet.stop();
  });

  it('a platform that reconnects and fails again at once goes back to the watcher, and the gateway is not told to exit', async () => {
    const telegram = new FakePlatform('telegram');
    const webhook = new FakePlatform('webhook');
    let dropOnConnected = 0;
    const lost: string[] = [];
    const { fleet } = setup([telegram, webhook], {
      // A failure found by the first thing done with a fresh connection (the redelivery the
      // gateway runs on connect): the adapter reports fatal while it is being installed.
      onConnected: (platform, adapter, info) => {
        if (platform !== 'telegram' || !info.isReconnect || dropOnConnected === 0) return;
        dropOnConnected -= 1;
        (adapter as FakeAdapter).fail({ code: 'network_error', message: 'drop', retryable: true });
      },
      onPlatformLost: (event) => lost.push(event.platform),
    });
    await fleet.start();
    telegram.up = false;
    (fleet.adapter('telegram') as FakeAdapter).fail({
      code: 'network_error',
      message: 'down',
      retryable: true,
    });
    await until(() => fleet.queue.has('telegram'));
    dropOnConnected = 1;
    telegram.up = true;
    await until(() => dropOnConnected === 0, 10_000);
    // Still the watcher's: queued again, or already reconnected by it — never neither.
    await until(() => fleet.adapter('telegram') !== undefined, 10_000);
    expect(lost).toEqual([]);
    expect(fleet.status().find((s) => s.platform === 'telegram')).toMatchObject({
      state: 'connected',
      reconnects: 2,
    });
    await fleet.stop();
  });

  it('an adapter that drops in the same turn its reconnect succeeds is never installed dead; the watcher retries it', async () => {
    const telegram = new FakePlatform('telegram');
    const webhook = new FakePlatform('webhook');
    const { fleet, lost } = setup([telegram, webhook]);
    await fleet.start();
    telegram.up = false;
    (fleet.adapter('telegram') as FakeAdapter).fail({
      code: 'network_error',
      message: 'down',
      retryable: true,
    });
    await until(() => fleet.queue.has('telegram'));
    const before = telegram.adapters.length;
    telegram.dropsRightAfterConnect = 1;
    telegram.up = true;
    await until(() => telegram.dropsRightAfterConnect === 0, 10_000);
    const dropped = telegram.adapters[before] as FakeAdapter;
    await until(
      () => fleet.adapter('telegram') !== undefined && fleet.adapter('telegram') !== dropped,
      10_000,
    );
    expect(dropped.disconnected).toBe(true);
    expect(lost).toEqual([]);
    expect(fleet.status().find((s) => s.platform === 'telegram')?.state).toBe('connected');
    await fleet.stop();
  });

  it('a non-retryable runtime failure is not queued; with nothing left the owner is told to exit cleanly', async () => {
    const telegram = new FakePlatform('telegram');
    const { fleet, noneLeft } = setup([telegram]);
    await fleet.start();
    const adapter = fleet.adapter('telegram') as FakeAdapter;
    adapter.fail({ code: 'unauthorized', message: 'token revoked', retryable: false });
    await until(() => noneLeft.length > 0);
    expect(fleet.queue.size).toBe(0);
    expect(noneLeft).toEqual([{ retryable: false, reason: 'token revoked' }]);
    await fleet.stop();
  });

  it('a retryable failure of the last adapter stays alive while it is queued', async () => {
    const telegram = new FakePlatform('telegram');
    const { fleet, noneLeft, lost, logger } = setup([telegram]);
    await fleet.start();
    telegram.up = false;
    (fleet.adapter('telegram') as FakeAdapter).fail({
      code: 'network_error',
      message: 'down',
      retryable: true,
    });
    await until(() => logger.lines.some((line) => /staying alive/.test(line.message)));
    expect(noneLeft).toEqual([]);
    expect(lost).toEqual([]);
    expect(fleet.queue.has('telegram')).toBe(true);
    await fleet.stop();
  });

  it('a connected adapter reporting relay_disabled ends disabled: not queued, not retried, no restart exit', async () => {
    const relay = new FakePlatform('relay');
    const webhook = new FakePlatform('webhook');
    const { fleet, lost, noneLeft } = setup([relay, webhook]);
    await fleet.start();
    const adapter = fleet.adapter('relay') as FakeAdapter;
    // Even flagged retryable: a relay switched off is not cured by reconnecting.
    adapter.fail({
      code: 'relay_disabled',
      message: 'relay disabled by operator',
      retryable: true,
    });
    await until(() => adapter.disconnected);
    await new Promise((resolve) => setTimeout(resolve, 100)); // several watcher passes at this scale
    expect(fleet.queue.has('relay')).toBe(false);
    expect(relay.connects).toEqual([false]);
    expect(fleet.status().find((s) => s.platform === 'relay')).toMatchObject({
      state: 'disabled',
      errorCode: 'relay_disabled',
    });
    expect(lost).toEqual([]);
    expect(noneLeft).toEqual([]);
    await fleet.stop();
  });

  it('relay_disabled as the last adapter asks for a clean exit, not a service restart', async () => {
    const relay = new FakePlatform('relay');
    const { fleet, noneLeft } = setup([relay]);
    await fleet.start();
    (fleet.adapter('relay') as FakeAdapter).fail({
      code: 'relay_disabled',
      message: 'relay disabled',
      retryable: true,
    });
    await until(() => noneLeft.length > 0);
    expect(noneLeft).toEqual([{ retryable: false, reason: 'relay disabled' }]);
    expect(fleet.status()[0]?.state).toBe('disabled');
    await fleet.stop();
  });

  it('a relay_disabled connect failure at startup is disabled, neither queued nor fatal', async () => {
    const relay = new FakePlatform('relay');
    const webhook = new FakePlatform('webhook');
    relay.up = false;
    relay.fatalOnConnect = { code: 'relay_disabled', message: 'relay disabled', retryable: true };
    const { fleet } = setup([relay, webhook]);
    const summary = await fleet.start();
    expect(summary.queued).toEqual([]);
    expect(summary.fatal).toEqual([]);
    expect(summary.disabled).toEqual(['relay']);
    expect(fleet.queue.size).toBe(0);
    expect(fleet.status().find((s) => s.platform === 'relay')?.state).toBe('disabled');
    await fleet.stop();
  });

  it('a queued platform whose reconnect reports relay_disabled leaves the queue as disabled', async () => {
    const relay = new FakePlatform('relay');
    const webhook = new FakePlatform('webhook');
    const { fleet } = setup([relay, webhook]);
    await fleet.start();
    relay.up = false;
    (fleet.adapter('relay') as FakeAdapter).fail({
      code: 'network_error',
      message: 'down',
      retryable: true,
    });
    await until(() => fleet.queue.has('relay'));
    relay.fatalOnConnect = { code: 'relay_disabled', message: 'relay disabled', retryable: true };
    await until(() => !fleet.queue.has('relay'), 10_000);
    const attempts = relay.connects.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(relay.connects.length).toBe(attempts);
    expect(fleet.status().find((s) => s.platform === 'relay')?.state).toBe('disabled');
    await fleet.stop();
  });

  it('a fatal report from a replaced adapter is ignored', async () => {
    const telegram = new FakePlatform('telegram');
    const { fleet } = setup([telegram]);
    await fleet.start();
    const live = fleet.adapter('telegram') as FakeAdapter;
    const stale = telegram.create({ reportFatal: () => {} });
    stale.hooks.reportFatal({ code: 'x', message: 'stale', retryable: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fleet.adapter('telegram')).toBe(live);
    expect(fleet.queue.size).toBe(0);
    await fleet.stop();
  });

  it('stop while startup connects are in flight cancels them, waits for them, and leaves no adapter running', async () => {
    const telegram = new FakePlatform('telegram');
    const slack = new FakePlatform('slack');
    // Connects that ignore their signal and succeed 600 ms later, well inside the budget.
    for (const remote of [telegram, slack]) remote.connectDelayMs = 600;
    const { fleet, connectedEvents } = setup([telegram, slack], {
      connectTimeoutS: () => 10_000, // 10 s at this scale
    });
    const starting = fleet.start();
    await until(() => telegram.connects.length === 1 && slack.connects.length === 1);
    const stopping = performance.now();
    await fleet.stop();
    // Cancelled, not waited out: a connect that ignores its signal does not hold the stop.
    expect(performance.now() - stopping).toBeLessThan(400);
    const created = [...telegram.adapters, ...slack.adapters];
    expect(created.every((adapter) => adapter.disconnected)).toBe(true);
    expect(fleet.connected()).toEqual([]);
    const summary = await starting;
    expect(summary.connected).toEqual([]);
    expect(summary.queued).toEqual([]);
    // Past the moment the abandoned connects resolve true: still nothing installed or announced.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(fleet.connected()).toEqual([]);
    expect(connectedEvents).toEqual([]);
    expect(fleet.queue.size).toBe(0);
    expect(fleet.status().map((s) => s.state)).toEqual(['stopped', 'stopped']);
  });

  it('stop while the watcher is reconnecting a platform waits for that connect and leaves it disconnected', async () => {
    const telegram = new FakePlatform('telegram');
    const webhook = new FakePlatform('webhook');
    const { fleet, connectedEvents } = setup([telegram, webhook], {
      connectTimeoutS: () => 10_000,
    });
    await fleet.start();
    telegram.up = false;
    (fleet.adapter('telegram') as FakeAdapter).fail({
      code: 'network_error',
      message: 'down',
      retryable: true,
    });
    await until(() => fleet.queue.has('telegram'));
    telegram.connectDelayMs = 200;
    telegram.up = true;
    const before = telegram.connects.length;
    await until(() => telegram.connects.length > before, 10_000);
    const reconnecting = telegram.adapters.at(-1) as FakeAdapter;
    await fleet.stop();
    expect(reconnecting.disconnected).toBe(true);
    expect(fleet.connected()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(fleet.connected()).toEqual([]);
    expect(connectedEvents.filter((event) => event.isReconnect)).toEqual([]);
  });

  it('stop disconnects every adapter and no failure during shutdown queues or exits', async () => {
    const telegram = new FakePlatform('telegram');
    const { fleet, noneLeft } = setup([telegram]);
    await fleet.start();
    const adapter = fleet.adapter('telegram') as FakeAdapter;
    fleet.beginShutdown();
    adapter.fail({ code: 'network_error', message: 'down', retryable: true });
    await fleet.stop();
    expect(adapter.disconnected).toBe(true);
    expect(fleet.queue.size).toBe(0);
    expect(noneLeft).toEqual([]);
    expect(fleet.status()[0]?.state).toBe('stopped');
  });
});
