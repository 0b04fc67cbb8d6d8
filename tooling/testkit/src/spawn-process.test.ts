import { existsSync, readdirSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isProcessRunning, spawnProcess } from './spawn-process.js';
import { tempHome } from './temp-home.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('spawnProcess', () => {
  it('waits for a readiness line and parses a port from it', async () => {
    const child = await spawnProcess({
      command: process.execPath,
      args: [
        '-e',
        "const s=require('net').createServer().listen(0,'127.0.0.1',()=>console.log('listening on '+s.address().port))",
      ],
      readyLine: /listening on (\d+)/,
    });
    const match = await child.waitForLine(/listening on (\d+)/);
    expect(Number(match[1])).toBeGreaterThan(0);
    const exit = await child.stop();
    expect(exit.signal).toBe('SIGTERM');
  });

  it('kills the whole process group, grandchildren included', async () => {
    const child = await spawnProcess({
      command: process.execPath,
      args: [
        '-e',
        "const c=require('child_process').spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{stdio:'ignore'});console.log('grandchild '+c.pid);setInterval(()=>{},1000)",
      ],
      readyLine: /grandchild (\d+)/,
    });
    const grandchild = Number((await child.waitForLine(/grandchild (\d+)/))[1]);
    await child.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(isProcessRunning(grandchild)).toBe(false);
  });

  it('runs the command with the given environment and collects its output', async () => {
    const child = await spawnProcess({
      command: process.execPath,
      args: ['-e', 'console.log("probe=" + process.env.TESTKIT_PROBE); console.error("to stderr")'],
      env: { ...process.env, TESTKIT_PROBE: 'from-the-test' },
      readyLine: 'to stderr',
    });
    await child.exited;
    expect(child.stdout()).toBe('probe=from-the-test\n');
    expect(child.stderr()).toBe('to stderr\n');
  });

  it('waits for a port to accept connections when asked to', async () => {
    const port = await freePort();
    await spawnProcess({
      command: process.execPath,
      args: [
        '-e',
        `setTimeout(() => require('net').createServer().listen(${port}, '127.0.0.1'), 300)`,
      ],
      readyPort: port,
    });
    expect(await connects(port)).toBe(true);
  });

  it('reports an early exit instead of waiting for the port forever', async () => {
    const port = await freePort();
    await expect(
      spawnProcess({
        command: process.execPath,
        args: ['-e', 'console.error("no listener"); process.exit(4)'],
        readyPort: port,
      }),
    ).rejects.toThrow(/exited .* before 127\.0\.0\.1:\d+ accepted connections.*no listener/s);
  });

  it('reports an early exit instead of waiting for the readiness line forever', async () => {
    await expect(
      spawnProcess({
        command: process.execPath,
        args: ['-e', 'console.error("boom"); process.exit(3)'],
        readyLine: 'never printed',
      }),
    ).rejects.toThrow(/exited.*boom/s);
  });
});

describe('cleanup when the test ends', () => {
  let leftRunning = -1;
  let leftHome = '';

  it('leaves a process and a temp home behind on purpose', async () => {
    const child = await spawnProcess({
      command: process.execPath,
      args: ['-e', 'console.log("up"); setInterval(() => {}, 1000)'],
      readyLine: 'up',
    });
    leftRunning = child.pid;
    leftHome = (await tempHome()).path;
    expect(isProcessRunning(leftRunning)).toBe(true);
    expect(existsSync(leftHome)).toBe(true);
  });

  it('finds both gone in the next test', () => {
    expect(leftRunning).toBeGreaterThan(0);
    expect(isProcessRunning(leftRunning)).toBe(false);
    expect(leftHome).not.toBe('');
    expect(existsSync(leftHome)).toBe(false);
  });
});

describe('tempHome', () => {
  it('creates a private empty folder and removes it', async () => {
    const home = await tempHome();
    expect(statSync(home.path).mode & 0o777).toBe(0o700);
    expect(readdirSync(home.path)).toEqual([]);
    await home.remove();
    expect(existsSync(home.path)).toBe(false);
  });
});
