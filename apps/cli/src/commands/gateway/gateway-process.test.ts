import { DEFAULT_DRAIN_TIMEOUT_S } from '@hermes/gateway';
import { describe, expect, it } from 'vitest';
import { argsOf, GATEWAY_DEFAULT_DRAIN_TIMEOUT_S, gatewayArgs } from './gateway-process.js';

describe('gateway process helpers', () => {
  it("uses the gateway's own drain default", () => {
    expect(GATEWAY_DEFAULT_DRAIN_TIMEOUT_S).toBe(DEFAULT_DRAIN_TIMEOUT_S);
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
    expect(argsOf(['/usr/bin/python', 'other.py'])).toBeNull();
  });
});
