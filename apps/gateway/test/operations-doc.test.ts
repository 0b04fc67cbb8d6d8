import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderSystemdUnit, resolveSystemdTimeoutStopSec } from '@hermes/supervisor';
import { describe, expect, it } from 'vitest';

const DOC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/operations.md');

describe('docs/operations.md', () => {
  it('shows the systemd unit exactly as @hermes/supervisor renders it, with no secret in it', async () => {
    const text = await readFile(DOC, 'utf8');
    const block = /```ini\n([\s\S]*?)```/.exec(text)?.[1];
    const rendered = renderSystemdUnit({
      home: '/home/ada/.hermes',
      profile: 'default',
      nodePath: '/usr/bin/node',
      gatewayBin: '/opt/hermes/apps/gateway/bin/hermes-gateway.js',
      drainS: 30,
      path: '/usr/local/bin:/usr/bin:/bin',
    });
    expect(block?.trim()).toBe(rendered.trim());
    expect(rendered).toContain(`TimeoutStopSec=${resolveSystemdTimeoutStopSec({ drainS: 30 })}`);
    expect(rendered).not.toMatch(/TOKEN|API_KEY|SECRET/);
  });
});
