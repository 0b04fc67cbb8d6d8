import { describe, expect, it } from 'vitest';
import {
  gatewaySubcommandOf,
  isGatewayCommandLine,
  splitWindowsCommandLine,
} from './gateway-command-line.js';

const gateways: readonly (readonly string[])[] = [
  ['hermes-gateway'],
  ['/usr/local/bin/hermes-gateway', '--replace'],
  ['/usr/bin/node', '/x/node_modules/.bin/hermes-gateway'],
  ['node', '--enable-source-maps', '/srv/app/node_modules/.bin/hermes-gateway', '--verbose'],
  ['node', '/x/apps/gateway/dist/bin.js'],
  // The committed bin shims the apps' `bin` fields name (they run dist/bin.js).
  ['node', '/x/apps/gateway/bin/hermes-gateway.js', '--port', '0'],
  ['node', '/x/apps/cli/bin/hermes.js', 'gateway', 'run'],
  ['node', '/x/node_modules/.pnpm/@hermes+gateway@0.2.0/node_modules/@hermes/gateway/dist/bin.js'],
  ['node', '--import', 'tsx', '/x/apps/gateway/src/bin.ts'],
  [
    'C:\\Program Files\\nodejs\\node.exe',
    'C:\\Users\\Ada\\AppData\\Roaming\\npm\\hermes-gateway.cmd',
  ],
  ['hermes', 'gateway', 'run'],
  ['hermes', 'gateway', 'restart'],
  ['hermes', 'gateway'],
  ['hermes', 'gateway', '--replace'],
  ['/home/ada/.local/bin/hermes', '-p', 'work', 'gateway', 'run'],
  ['hermes', '--profile=work', 'gateway', 'run', '--replace'],
  ['hermes', '-p=work', 'gateway', 'restart'],
  ['node', '/x/node_modules/.bin/hermes', 'gateway', 'run'],
  ['node', '/x/apps/cli/dist/bin.js', '--profile', 'work', 'gateway', 'run'],
  ['HERMES.EXE', 'Gateway', 'Run'],
  // The reference (Python) gateway's forms.
  ['python3', '/opt/hermes/gateway/run.py'],
  ['python3', '-m', 'hermes_cli.main', 'gateway', 'run'],
];

const notGateways: readonly (readonly string[])[] = [
  [],
  ['sleep', '30'],
  ['node', '/x/node_modules/vitest/vitest.mjs'],
  ['hermes', 'gateway', 'status'],
  ['node', '/x/apps/cli/bin/hermes.js', 'gateway', 'status'],
  ['node', '/x/apps/tui-bridge/bin/hermes-tui-bridge.js'],
  ['hermes', 'gateway', 'stop'],
  ['hermes', 'chat', '-q', 'gateway run'],
  ['hermes', 'sessions', 'list'],
  ['hermes'],
  ['node', '/x/apps/cli/dist/bin.js', 'update', '--plan'],
  ['node', '/x/apps/gateway/dist/restart-helper.js'],
  ['vim', '/x/hermes-gateway.md'],
  ['node', '/x/hermes-gateways/index.js'],
];

describe('isGatewayCommandLine', () => {
  it.each(gateways.map((argv) => [argv.join(' '), argv]))('matches %s', (_name, argv) => {
    expect(isGatewayCommandLine(argv)).toBe(true);
  });

  it.each(notGateways.map((argv) => [argv.join(' ') || '(empty)', argv]))(
    'does not match %s',
    (_name, argv) => {
      expect(isGatewayCommandLine(argv)).toBe(false);
    },
  );

  it('names the subcommand of a CLI command line, and run for the gateway bin', () => {
    expect(gatewaySubcommandOf(['hermes-gateway'])).toBe('run');
    expect(gatewaySubcommandOf(['hermes', '-p', 'x', 'gateway'])).toBe('run');
    expect(gatewaySubcommandOf(['hermes', 'gateway', 'status'])).toBe('status');
    expect(gatewaySubcommandOf(['hermes', 'chat'])).toBeNull();
    expect(gatewaySubcommandOf(['sleep', '30'])).toBeNull();
  });
});

describe('splitWindowsCommandLine', () => {
  it('keeps quoted paths with spaces together', () => {
    expect(
      splitWindowsCommandLine(
        '"C:\\Program Files\\nodejs\\node.exe"  C:\\npm\\hermes-gateway.cmd --say "a \\"b\\""',
      ),
    ).toEqual([
      'C:\\Program Files\\nodejs\\node.exe',
      'C:\\npm\\hermes-gateway.cmd',
      '--say',
      'a "b"',
    ]);
    expect(splitWindowsCommandLine('hermes gateway ""')).toEqual(['hermes', 'gateway', '']);
  });
});
