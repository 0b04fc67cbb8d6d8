import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isGatewayCommandLine } from '@hermes/control-socket';
import { spawnProcess, tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { gatewayEnv } from './gateway-process.js';

const packageDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The file the package's `bin` names for `hermes-gateway` (what npm and pnpm link). */
async function binPath(): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(packageDir, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  return path.join(packageDir, manifest.bin['hermes-gateway'] ?? '');
}

describe('the hermes-gateway command', () => {
  it('is a committed file outside dist that runs the built gateway, recognised as a gateway by its command line', async () => {
    const bin = await binPath();
    expect(path.relative(packageDir, bin)).toBe(path.join('bin', 'hermes-gateway.js'));
    const home = (await tempHome()).path;
    const args = [bin, '--port', '0'];
    const gateway = await spawnProcess({
      command: process.execPath,
      args,
      env: gatewayEnv(home),
      readyLine: /Hermes gateway listening on (http:\/\/\S+)/,
      readyTimeoutMs: 20_000,
    });
    const url = (await gateway.waitForLine(/Hermes gateway listening on (http:\/\/\S+)/))[1];
    expect((await fetch(`${url}/health`)).status).toBe(200);
    // What the PID claim and `hermes gateway stop` test a live process's command line with.
    expect(isGatewayCommandLine([process.execPath, ...args])).toBe(true);
    gateway.kill('SIGTERM');
    expect((await gateway.exited).code).toBe(0);
  }, 30_000);

  it('says to build first, exit 1, when dist is missing (a clean clone before pnpm build)', async () => {
    const checkout = (await tempHome('hermes-unbuilt-')).path;
    await mkdir(path.join(checkout, 'bin'));
    await copyFile(await binPath(), path.join(checkout, 'bin', 'hermes-gateway.js'));
    await writeFile(path.join(checkout, 'package.json'), '{"type":"module"}\n');
    const run = await spawnProcess({
      command: process.execPath,
      args: [path.join(checkout, 'bin', 'hermes-gateway.js'), '--port', '0'],
      env: gatewayEnv(checkout),
    });
    expect((await run.exited).code).toBe(1);
    expect(run.stderr()).toContain(
      `hermes-gateway: @hermes/gateway is not built (${path.join(checkout, 'dist', 'bin.js')} is missing). Run \`pnpm build\``,
    );
  });
});
