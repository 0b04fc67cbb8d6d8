import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { createConfigReader } from './config-reader.js';

describe('createConfigReader', () => {
  it('reflects edits without a restart and reuses the parse while the file is unchanged', async () => {
    const home = (await tempHome()).path;
    const file = path.join(home, 'config.yaml');
    const reader = createConfigReader({ home });
    expect(reader.read().config.browser.extensionControl.developerMode).toBe(false);
    writeFileSync(file, 'browser:\n  extension_control:\n    developer_mode: true\n');
    const first = reader.read();
    expect(first.config.browser.extensionControl.developerMode).toBe(true);
    expect(reader.read()).toBe(first);
    writeFileSync(file, 'browser:\n  extension_control:\n    developer_mode: false  # revoked\n');
    expect(reader.read().config.browser.extensionControl.developerMode).toBe(false);
  });

  it('throws on every read while the file is invalid, then recovers', async () => {
    const home = (await tempHome()).path;
    const file = path.join(home, 'config.yaml');
    writeFileSync(file, 'model: [oops\n');
    const reader = createConfigReader({ home });
    expect(() => reader.read()).toThrow(/invalid YAML/);
    expect(() => reader.read()).toThrow(/invalid YAML/);
    writeFileSync(file, 'model: fixed-model\n');
    expect(reader.read().config.model.model).toBe('fixed-model');
  });
});
