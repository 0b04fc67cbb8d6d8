import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { LOOP_TICK_BYTE, messages } from './constants.js';
import { SupervisorError } from './errors.js';
import {
  type HeartbeatRecord,
  heartbeatFilePath,
  loopTickSocketPath,
  startLoopHeartbeat,
} from './heartbeat.js';

function readByte(target: string | number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket =
      typeof target === 'string' ? net.connect(target) : net.connect(target, '127.0.0.1');
    socket.once('data', (chunk: Buffer) => {
      resolve(chunk.toString('utf8'));
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  const pid = child.pid ?? -1;
  await new Promise((resolve) => child.once('exit', resolve));
  return pid;
}

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixture = path.join(packageRoot, 'test/fixtures/heartbeat-child.ts');

describe('loop heartbeat and witness', () => {
  it('writes off the event loop and awaits the write: the loop keeps turning while it waits', async () => {
    const home = await tempHome();
    const child = await spawnProcess({
      command: process.execPath,
      args: ['--conditions=@hermes/source', '--import', 'tsx', fixture],
      cwd: packageRoot,
      env: {
        ...process.env,
        HEARTBEAT_HOME: home.path,
        HEARTBEAT_BEHAVIOUR: 'plugged-pool',
        // One pool thread, which the fixture holds while the write falls due.
        UV_THREADPOOL_SIZE: '1',
      },
      readyLine: 'ready',
    });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    const result = JSON.parse(child.stdout().trim().split('\n').at(-1) ?? '') as {
      ticksWhilePlugged: number;
      writtenAfterRelease: boolean;
    };
    // The write waited for the pool (an inline write would have finished on the loop at once)…
    expect(result.writtenAfterRelease).toBe(true);
    // …while the loop ran: ~150 ticks of 10 ms in 1.5 s; ≥ 5 is the reference's bar.
    expect(result.ticksWhilePlugged).toBeGreaterThanOrEqual(5);
  });

  it('writes the heartbeat at once and serves a private witness that answers one byte', async () => {
    const home = await tempHome();
    const heartbeat = await startLoopHeartbeat({ home: home.path, intervalS: 1, startTime: 1234 });
    try {
      const record = JSON.parse(
        await readFile(heartbeatFilePath(home.path), 'utf8'),
      ) as HeartbeatRecord;
      expect(record).toMatchObject({
        pid: process.pid,
        start_time: 1234,
        loop_tick_socket: true,
        loop_tick_tcp_port: null,
      });
      expect(heartbeat.witnessPath).toBe(loopTickSocketPath(home.path, process.pid));
      const info = await stat(heartbeat.witnessPath ?? '');
      expect(info.mode & 0o777).toBe(0o600);
      expect(await readByte(heartbeat.witnessPath ?? '')).toBe(LOOP_TICK_BYTE);
    } finally {
      await heartbeat.stop();
    }
  });

  it('rewrites the heartbeat every interval', async () => {
    const home = await tempHome();
    const heartbeat = await startLoopHeartbeat({ home: home.path, intervalS: 1 });
    try {
      const first = JSON.parse(await readFile(heartbeat.heartbeatFile, 'utf8')) as HeartbeatRecord;
      await heartbeat.nextWrite();
      const second = JSON.parse(await readFile(heartbeat.heartbeatFile, 'utf8')) as HeartbeatRecord;
      expect(second.monotonic).toBeGreaterThan(first.monotonic);
    } finally {
      await heartbeat.stop();
    }
  });

  it.each([
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    0,
    -5,
    // Past setTimeout's 2^31 − 1 ms Node fires after 1 ms: as tight a loop as NaN.
    3_000_000,
  ])(
    'refuses interval %s with invalid_heartbeat_options instead of writing in a tight loop',
    async (intervalS) => {
      const home = await tempHome();
      const started = startLoopHeartbeat({ home: home.path, intervalS });
      const failure = await started.then(
        async (heartbeat) => {
          // Without the check: count the writes a 100 ms window holds, then stop the loop.
          let writes = 0;
          const deadline = performance.now() + 100;
          while (performance.now() < deadline) {
            await Promise.race([
              heartbeat.nextWrite(),
              new Promise((resolve) => setTimeout(resolve, 20)),
            ]);
            writes += 1;
          }
          await heartbeat.stop();
          return new Error(`started and wrote ~${writes} times in 100 ms`);
        },
        (error: unknown) => error,
      );
      expect(SupervisorError.isInstance(failure) && failure.code).toBe('invalid_heartbeat_options');
      expect((failure as Error).message).toMatch(/intervalS/);
      expect(existsSync(heartbeatFilePath(home.path))).toBe(false);
    },
  );

  it('unlinks stale witness nodes of dead processes and its own node on stop', async () => {
    const home = await tempHome();
    const stale = loopTickSocketPath(home.path, await deadPid());
    await mkdir(path.dirname(stale), { recursive: true });
    await writeFile(stale, '');
    const heartbeat = await startLoopHeartbeat({ home: home.path, intervalS: 1 });
    expect(existsSync(stale)).toBe(false);
    const own = heartbeat.witnessPath ?? '';
    expect(existsSync(own)).toBe(true);
    await heartbeat.stop();
    expect(existsSync(own)).toBe(false);
  });

  it('serves the witness over loopback TCP and publishes the port when asked', async () => {
    const home = await tempHome();
    const heartbeat = await startLoopHeartbeat({
      home: home.path,
      intervalS: 1,
      useTcpWitness: true,
    });
    try {
      const record = JSON.parse(await readFile(heartbeat.heartbeatFile, 'utf8')) as HeartbeatRecord;
      expect(record.loop_tick_tcp_port).toBe(heartbeat.witnessTcpPort);
      expect(await readByte(heartbeat.witnessTcpPort ?? 0)).toBe(LOOP_TICK_BYTE);
    } finally {
      await heartbeat.stop();
    }
  });

  it('disables only the witness, with the reference warning, when the socket cannot bind', async () => {
    const home = await tempHome(`hermes-${'x'.repeat(90)}-`);
    const warnings: string[] = [];
    const heartbeat = await startLoopHeartbeat({
      home: home.path,
      intervalS: 1,
      warn: (message) => warnings.push(message),
    });
    try {
      expect(warnings).toEqual([messages.witnessUnavailable]);
      const record = JSON.parse(await readFile(heartbeat.heartbeatFile, 'utf8')) as HeartbeatRecord;
      expect(record.loop_tick_socket).toBe(false);
    } finally {
      await heartbeat.stop();
    }
  });
});
