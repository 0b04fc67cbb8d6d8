import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_RESTART_DRAIN_TIMEOUT_S } from '@hermes/config';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { argsOf, drainSecondsFor, gatewayArgs } from './gateway-process.js';

describe('gateway process helpers', () => {
  it("sizes a stop by the gateway's --drain-timeout, else restart_drain_timeout, else the shared default", async () => {
    const home = (await tempHome()).path;
    expect(await drainSecondsFor(home, null)).toBe(DEFAULT_RESTART_DRAIN_TIMEOUT_S);
    await writeFile(path.join(home, 'config.yaml'), 'gateway:\n  restart_drain_timeout: 12\n');
    expect(await drainSecondsFor(home, null)).toBe(12);
    expect(
      await drainSecondsFor(home, [
        '/usr/bin/node',
        '/x/gateway/dist/bin.js',
        '--drain-timeout',
        '4',
      ]),
    ).toBe(4);
    await writeFile(path.join(home, 'config.yaml'), 'model: [unclosed\n');
    expect(await drainSecondsFor(home, null)).toBe(DEFAULT_RESTART_DRAIN_TIMEOUT_S);
  });

  it('passes the gateway options through and reads them back from a command line', () => {
    const args = gatewayArgs({ port: 0, host: '127.0.0.1', logLevel: 'debug', drainTimeout: 5 });
    expect(args).toEqual([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--log-level',
      'debug',
      '--drain-timeout',
      '5',
    ]);
    expect(argsOf(['/usr/bin/node', '/opt/hermes/apps/gateway/dist/bin.js', ...args])).toEqual(
      args,
    );
    expect(
      argsOf(['/usr/bin/node', '/usr/lib/node_modules/.bin/hermes-gateway', '--port', '1']),
    ).toEqual(['--port', '1']);
    // The committed bin shim the package's `bin` names (it runs dist/bin.js).
    expect(
      argsOf(['/usr/bin/node', '/opt/hermes/apps/gateway/bin/hermes-gateway.js', '--port', '2']),
    ).toEqual(['--port', '2']);
    expect(argsOf(['/usr/bin/python', 'other.py'])).toBeNull();
  });
});
