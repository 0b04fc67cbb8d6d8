import { mkdir, unlink, utimes, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { heartbeatFilePath, loopTickSocketPath, startLoopHeartbeat } from './heartbeat.js';
import { probeLiveness } from './liveness-probe.js';

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixture = path.join(packageRoot, 'test/fixtures/heartbeat-child.ts');
const quick = { tickTimeoutS: 0.3, tickGapS: 0.1 };

async function startChild(home: string, behaviour: 'spin' | 'idle') {
  return spawnProcess({
    command: process.execPath,
    args: ['--conditions=@hermes/source', '--import', 'tsx', fixture],
    cwd: packageRoot,
    env: { ...process.env, HEARTBEAT_HOME: home, HEARTBEAT_BEHAVIOUR: behaviour },
    readyLine: 'ready',
  });
}

/** A stale heartbeat of this process that says its witness is armed. */
async function writeStaleArmedHeartbeat(home: string): Promise<void> {
  const file = heartbeatFilePath(home);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(
    file,
    JSON.stringify({ pid: process.pid, loop_tick_socket: true, loop_tick_tcp_port: null }),
  );
  const old = new Date(Date.now() - 3600_000);
  await utimes(file, old, old);
}

/**
 * A real witness socket whose answers the test scripts: connection n (1-based) is answered with the
 * tick byte only from `answerFrom` on; earlier ones are closed silently, as a wedged loop would leave
 * them (after `onSilent`, which may pull the node away).
 */
async function scriptedWitness(
  home: string,
  script: { answerFrom: number; onSilent?: (connection: number) => Promise<void> | void },
) {
  const socketPath = loopTickSocketPath(home, process.pid);
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    const connection = connections;
    socket.on('error', () => undefined);
    if (connection >= script.answerFrom) {
      socket.end('1');
      return;
    }
    void Promise.resolve(script.onSilent?.(connection)).then(() => socket.end());
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('probeLiveness', () => {
  it('reports alive when the witness answers', async () => {
    const home = await tempHome();
    const heartbeat = await startLoopHeartbeat({ home: home.path, intervalS: 1 });
    try {
      expect(await probeLiveness(home.path, { pid: process.pid, ...quick })).toBe('alive');
      expect(await probeLiveness(home.path)).toBe('alive');
    } finally {
      await heartbeat.stop();
    }
  });

  it('reports unknown without a heartbeat, or for a heartbeat of another pid', async () => {
    const home = await tempHome();
    expect(await probeLiveness(home.path, { pid: process.pid, ...quick })).toBe('unknown');
    const heartbeat = await startLoopHeartbeat({ home: home.path, intervalS: 1 });
    try {
      expect(await probeLiveness(home.path, { pid: process.pid + 1, ...quick })).toBe('unknown');
    } finally {
      await heartbeat.stop();
    }
  });

  it('reports unknown for a heartbeat that does not match the expected shape', async () => {
    const home = await tempHome();
    await mkdir(path.dirname(heartbeatFilePath(home.path)), { recursive: true });
    await writeFile(heartbeatFilePath(home.path), JSON.stringify({ pid: 'not a number' }));
    expect(await probeLiveness(home.path, { pid: process.pid, ...quick })).toBe('unknown');
  });

  it('calls a really wedged process wedged only after its heartbeat is stale', async () => {
    const home = await tempHome();
    const child = await startChild(home.path, 'spin');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // Fresh heartbeat + silent witness: the off-loop write may have landed after the freeze.
    expect(await probeLiveness(home.path, { pid: child.pid, staleAfterS: 60, ...quick })).toBe(
      'unknown',
    );
    // Stale heartbeat + three silent witness checks.
    expect(await probeLiveness(home.path, { pid: child.pid, staleAfterS: 0.5, ...quick })).toBe(
      'wedged',
    );
  });

  it('never calls a healthy process wedged, even with a stale heartbeat', async () => {
    const home = await tempHome();
    const child = await startChild(home.path, 'idle');
    const old = new Date(Date.now() - 3600_000);
    await utimes(heartbeatFilePath(home.path), old, old);
    expect(await probeLiveness(home.path, { pid: child.pid, staleAfterS: 1, ...quick })).toBe(
      'alive',
    );
  });

  it('treats a stale heartbeat from a legacy writer (no witness key) as wedged', async () => {
    const home = await tempHome();
    const file = heartbeatFilePath(home.path);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(
      file,
      JSON.stringify({ pid: process.pid, updated_at: new Date().toISOString() }),
    );
    const old = new Date(Date.now() - 3600_000);
    await utimes(file, old, old);
    expect(await probeLiveness(home.path, { pid: process.pid, ...quick })).toBe('wedged');
  });

  it('reports unknown for a stale heartbeat whose witness was never armed', async () => {
    const home = await tempHome();
    const file = heartbeatFilePath(home.path);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(
      file,
      JSON.stringify({ pid: process.pid, loop_tick_socket: false, loop_tick_tcp_port: null }),
    );
    const old = new Date(Date.now() - 3600_000);
    await utimes(file, old, old);
    expect(await probeLiveness(home.path, { pid: process.pid, ...quick })).toBe('unknown');
  });

  it('needs three silent witness checks before it calls a stale heartbeat wedged', async () => {
    const home = await tempHome();
    await writeStaleArmedHeartbeat(home.path);
    const witness = await scriptedWitness(home.path, { answerFrom: Number.POSITIVE_INFINITY });
    try {
      expect(await probeLiveness(home.path, { pid: process.pid, ...quick })).toBe('wedged');
      expect(witness.connections).toBe(3);
    } finally {
      await witness.close();
    }
  });

  it('calls a stale heartbeat alive when the witness answers only on its last check', async () => {
    const home = await tempHome();
    await writeStaleArmedHeartbeat(home.path);
    const witness = await scriptedWitness(home.path, { answerFrom: 3 });
    try {
      expect(await probeLiveness(home.path, { pid: process.pid, ...quick })).toBe('alive');
      expect(witness.connections).toBe(3);
    } finally {
      await witness.close();
    }
  });

  it('reports unknown when the witness node vanishes between checks', async () => {
    const home = await tempHome();
    await writeStaleArmedHeartbeat(home.path);
    const witness = await scriptedWitness(home.path, {
      answerFrom: Number.POSITIVE_INFINITY,
      onSilent: async () => {
        await unlink(loopTickSocketPath(home.path, process.pid));
      },
    });
    try {
      expect(await probeLiveness(home.path, { pid: process.pid, ...quick })).toBe('unknown');
      expect(witness.connections).toBe(1);
    } finally {
      await witness.close();
    }
  });
});
