import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createConfigReader } from '@hermes/config';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { BrowserControlBroker } from './broker.js';
import { flagsFromConfigReader } from './flags.js';
import { createScope } from './scope.js';

const scope = createScope({
  principalId: 'principal:default:abc',
  profileId: 'default',
  sessionId: 's',
  controllerId: 'c',
  browserProfileId: 'b',
  transportFamily: 'local-api',
  capabilities: ['browser_evaluate', 'browser_cdp', 'browser_snapshot'],
});

describe('developer mode read live from config.yaml', () => {
  it('revokes and restores privileged capabilities of an attached controller without restart', async () => {
    const home = await tempHome();
    const file = path.join(home.path, 'config.yaml');
    const write = (developerMode: string) =>
      writeFile(
        file,
        `browser:\n  extension_control:\n    enabled: true\n    developer_mode: ${developerMode}\n`,
      );
    await write('true');
    const broker = new BrowserControlBroker({
      flags: flagsFromConfigReader(createConfigReader({ home: home.path })),
    });
    await broker.attach(scope, () => {}, {});
    expect(broker.select(scope, 'browser_evaluate')).not.toBeNull();
    expect(broker.select(scope, 'browser_cdp')).not.toBeNull();

    await write('false');
    expect(broker.select(scope, 'browser_evaluate')).toBeNull();
    expect(broker.select(scope, 'browser_cdp')).toBeNull();
    expect(broker.select(scope, 'browser_snapshot')).not.toBeNull();

    await write('"true"');
    expect(broker.select(scope, 'browser_evaluate')).toBeNull();

    await write('true');
    expect(broker.select(scope, 'browser_evaluate')).not.toBeNull();
  });

  it('lets a pinned broker ignore the config', async () => {
    const home = await tempHome();
    await writeFile(
      path.join(home.path, 'config.yaml'),
      'browser:\n  extension_control:\n    enabled: true\n    developer_mode: true\n',
    );
    const flags = flagsFromConfigReader(createConfigReader({ home: home.path }));
    const pinnedOff = new BrowserControlBroker({ flags, developerMode: false });
    await pinnedOff.attach(scope, () => {}, {});
    expect(pinnedOff.select(scope, 'browser_evaluate')).toBeNull();
  });
});
