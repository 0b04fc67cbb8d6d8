import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  FALLBACK_SOCKET_PREFIX,
  MAX_SOCKET_PATH_BYTES,
  SOCKET_FILE_NAME,
  SOCKET_POINTER_FILE_NAME,
  WINDOWS_PIPE_PREFIX,
} from './constants.js';
import { canonicalHomePath, homeHash } from './home-hash.js';
import {
  fitsSocketPathLimit,
  type RejectedSocket,
  resolveClientSocketPath,
  resolveServerSocketPath,
  windowsPipeName,
} from './socket-path.js';

async function listenOn(socketPath: string): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  await chmod(socketPath, 0o600);
  return server;
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('resolveServerSocketPath', () => {
  it('binds inside a short home with no pointer file', async () => {
    const home = await tempHome();
    const location = await resolveServerSocketPath(home.path);
    expect(location).toEqual({
      bindPath: path.join(home.path, SOCKET_FILE_NAME),
      pointerFile: null,
    });
  });

  it('falls back to a hashed temp-dir socket plus a pointer file for a home too deep for sun_path', async () => {
    const home = path.join('/tmp', 'x'.repeat(120), 'home');
    const location = await resolveServerSocketPath(home);
    expect(Buffer.byteLength(location.bindPath)).toBeLessThanOrEqual(MAX_SOCKET_PATH_BYTES);
    expect(path.basename(location.bindPath)).toBe(
      `${FALLBACK_SOCKET_PREFIX}${await homeHash(home)}.sock`,
    );
    expect(location.pointerFile).toBe(path.join(home, SOCKET_POINTER_FILE_NAME));
  });

  it('prefers /tmp when the OS temp dir is itself too deep', async () => {
    const home = path.join('/tmp', 'y'.repeat(120));
    const deepTemp = path.join('/tmp', 'z'.repeat(110));
    const location = await resolveServerSocketPath(home, { temporaryDirectory: deepTemp });
    expect(path.dirname(location.bindPath)).toBe('/tmp');
  });

  it('measures the limit in UTF-8 bytes, not characters', () => {
    const thirtyThreeSnowmen = `/${'☃'.repeat(33)}`; // 1 + 99 bytes = 100 bytes, 34 characters
    expect(fitsSocketPathLimit(thirtyThreeSnowmen)).toBe(true);
    expect(fitsSocketPathLimit(`${thirtyThreeSnowmen}a`)).toBe(false);
  });

  it('uses a per-home, stable named pipe on Windows', async () => {
    const first = await windowsPipeName('C:\\Users\\a\\hermes');
    expect(first.startsWith(WINDOWS_PIPE_PREFIX)).toBe(true);
    expect(await windowsPipeName('C:\\Users\\a\\hermes')).toBe(first);
    expect(await windowsPipeName('C:\\Users\\b\\hermes')).not.toBe(first);
    const location = await resolveServerSocketPath('C:\\Users\\a\\hermes', { platform: 'win32' });
    expect(location).toEqual({ bindPath: first, pointerFile: null });
    expect(await resolveClientSocketPath('C:\\Users\\a\\hermes', { platform: 'win32' })).toBe(
      first,
    );
  });
});

describe('homeHash', () => {
  it('hashes a symlinked home like its target, even below a part that does not exist yet', async () => {
    const root = await tempHome();
    await mkdir(path.join(root.path, 'real'));
    await symlink(path.join(root.path, 'real'), path.join(root.path, 'link'));
    expect(await canonicalHomePath(path.join(root.path, 'link', 'missing'))).toBe(
      path.join(await canonicalHomePath(path.join(root.path, 'real')), 'missing'),
    );
    expect(await homeHash(path.join(root.path, 'link'))).toBe(
      await homeHash(path.join(root.path, 'real')),
    );
    expect(await homeHash(path.join(root.path, 'link'))).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('resolveClientSocketPath', () => {
  it('returns null when neither a socket nor a pointer exists', async () => {
    const home = await tempHome();
    expect(await resolveClientSocketPath(home.path)).toBeNull();
  });

  it('follows the pointer file to its target and tolerates a BOM and whitespace', async () => {
    const home = await tempHome();
    const elsewhere = await tempHome();
    const target = path.join(elsewhere.path, 'g.sock');
    const server = await listenOn(target);
    try {
      await writeFile(path.join(home.path, SOCKET_POINTER_FILE_NAME), `\uFEFF${target}\n`);
      expect(await resolveClientSocketPath(home.path)).toBe(target);
    } finally {
      await closeServer(server);
    }
  });

  it('prefers the direct socket over the pointer', async () => {
    const home = await tempHome();
    const elsewhere = await tempHome();
    const direct = path.join(home.path, SOCKET_FILE_NAME);
    const servers = [await listenOn(direct), await listenOn(path.join(elsewhere.path, 'g.sock'))];
    try {
      await writeFile(
        path.join(home.path, SOCKET_POINTER_FILE_NAME),
        path.join(elsewhere.path, 'g.sock'),
      );
      expect(await resolveClientSocketPath(home.path)).toBe(direct);
    } finally {
      await Promise.all(servers.map(closeServer));
    }
  });

  it('returns null for a pointer that points nowhere', async () => {
    const home = await tempHome();
    await writeFile(path.join(home.path, SOCKET_POINTER_FILE_NAME), '/tmp/does-not-exist.sock');
    expect(await resolveClientSocketPath(home.path)).toBeNull();
  });

  it('ignores a regular file planted at the socket path', async () => {
    const home = await tempHome();
    await writeFile(path.join(home.path, SOCKET_FILE_NAME), 'not a socket');
    expect(await resolveClientSocketPath(home.path)).toBeNull();
  });

  it('refuses a socket that group or others may connect to', async () => {
    const home = await tempHome();
    const direct = path.join(home.path, SOCKET_FILE_NAME);
    const server = await listenOn(direct);
    await chmod(direct, 0o666);
    const rejected: RejectedSocket[] = [];
    try {
      expect(
        await resolveClientSocketPath(home.path, { onRejected: (item) => rejected.push(item) }),
      ).toBeNull();
      expect(rejected[0]?.reason).toBe(
        `Ignoring control socket ${direct}: mode 666 allows group/other access`,
      );
    } finally {
      await closeServer(server);
    }
  });
});
