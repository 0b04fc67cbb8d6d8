import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createConfigReader, withHome } from '@hermes/config';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { flagsFromConfigReader, liveExtensionControlFlags, readFlags } from './flags.js';

async function writeConfig(home: string, text: string): Promise<void> {
  await writeFile(path.join(home, 'config.yaml'), text);
}

describe('extension control flags', () => {
  it('reads as on only for a literal boolean true', async () => {
    const home = await tempHome();
    const flags = flagsFromConfigReader(createConfigReader({ home: home.path }));
    for (const value of ['"true"', 'yes', '1', '[true]', '{a: true}']) {
      await writeConfig(
        home.path,
        `browser:\n  extension_control:\n    enabled: ${value}\n    developer_mode: ${value}\n`,
      );
      expect(flags()).toMatchObject({ enabled: false, developerMode: false });
    }
    await writeConfig(home.path, 'browser:\n  extension_control:\n    enabled: true\n');
    expect(flags()).toMatchObject({ enabled: true, developerMode: false });
  });

  it('reads as off when the section is missing or not a mapping', async () => {
    const home = await tempHome();
    const flags = flagsFromConfigReader(createConfigReader({ home: home.path }));
    expect(flags().enabled).toBe(false);
    await writeConfig(home.path, 'browser: 3\n');
    expect(flags().enabled).toBe(false);
    await writeConfig(home.path, 'browser:\n  extension_control: [1]\n');
    expect(flags().enabled).toBe(false);
  });

  it('reads as off when the config cannot be parsed', async () => {
    const home = await tempHome();
    await writeConfig(home.path, 'browser: [unclosed\n');
    expect(flagsFromConfigReader(createConfigReader({ home: home.path }))().enabled).toBe(false);
    expect(
      readFlags(() => {
        throw new Error('boom');
      }),
    ).toEqual({ enabled: false, developerMode: false });
  });

  it('follows the current home live, without a restart', async () => {
    const home = await tempHome();
    await withHome(home.path, async () => {
      expect(liveExtensionControlFlags().enabled).toBe(false);
      await writeConfig(home.path, 'browser:\n  extension_control:\n    enabled: true\n');
      expect(liveExtensionControlFlags().enabled).toBe(true);
    });
  });
});
