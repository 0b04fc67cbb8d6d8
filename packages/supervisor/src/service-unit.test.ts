import { describe, expect, it } from 'vitest';
import { resolveSystemdTimeoutStopSec } from './budgets.js';
import {
  findEmbeddedSecrets,
  launchdLabel,
  renderLaunchdPlist,
  renderSystemdUnit,
  systemdUnitName,
} from './service-unit.js';

const base = {
  home: '/home/ada/.hermes',
  profile: 'default',
  nodePath: '/usr/bin/node',
  gatewayBin: '/opt/hermes/gateway/dist/bin.js',
  drainS: 30,
};

describe('systemd unit', () => {
  it('names the unit after the profile', () => {
    expect(systemdUnitName('default')).toBe('hermes-gateway.service');
    expect(systemdUnitName('work')).toBe('hermes-gateway-work.service');
  });

  it('runs the gateway for the home with a stop timeout that outlasts the shutdown watchdog', () => {
    const unit = renderSystemdUnit({ ...base, args: ['--port', '8642'] });
    expect(unit).toContain(
      'ExecStart="/usr/bin/node" "/opt/hermes/gateway/dist/bin.js" "--port" "8642"',
    );
    expect(unit).toContain('Environment="HERMES_HOME=/home/ada/.hermes"');
    expect(unit).toContain(`TimeoutStopSec=${resolveSystemdTimeoutStopSec({ drainS: 30 })}`);
    expect(unit).toContain('RestartPreventExitStatus=78');
    expect(unit).toContain('WantedBy=default.target');
    expect(findEmbeddedSecrets(unit)).toEqual([]);
  });

  it('quotes paths with spaces, quotes, percent and dollar signs so systemd reads them back', () => {
    const unit = renderSystemdUnit({ ...base, home: '/home/a "b"/100%/$x' });
    expect(unit).toContain('Environment="HERMES_HOME=/home/a \\"b\\"/100%%/$x"');
    expect(unit).toContain('WorkingDirectory=/home/a "b"/100%%/$x');
    expect(renderSystemdUnit({ ...base, args: ['$HOME'] })).toContain('"$$HOME"');
  });

  it('refuses an argument with a line break (it would inject a directive)', () => {
    expect(() => renderSystemdUnit({ ...base, args: ['x\nExecStartPre=/bin/evil'] })).toThrow(
      /line break/,
    );
  });
});

describe('launchd agent', () => {
  it('keeps the gateway alive after failures, within launchd ExitTimeOut', () => {
    const plist = renderLaunchdPlist({ ...base, profile: 'work', drainS: 120 });
    expect(launchdLabel('work')).toBe('ai.hermes.gateway.work');
    expect(plist).toContain('<key>Label</key><string>ai.hermes.gateway.work</string>');
    expect(plist).toContain('<key>ExitTimeOut</key><integer>60</integer>');
    // The drain is capped 10 s below ExitTimeOut.
    expect(plist).toContain('<string>--drain-timeout</string>\n    <string>50</string>');
    expect(plist).toContain('<key>SuccessfulExit</key><false/>');
    expect(plist).toContain('<key>HERMES_HOME</key><string>/home/ada/.hermes</string>');
    expect(findEmbeddedSecrets(plist)).toEqual([]);
  });

  it('escapes XML in paths', () => {
    expect(renderLaunchdPlist({ ...base, home: '/a&b<c>' })).toContain('/a&amp;b&lt;c&gt;');
  });
});

describe('findEmbeddedSecrets', () => {
  it('reports embedded keys, masked, and ignores comments', () => {
    const unit = [
      '# OPENAI_API_KEY=sk-commented-out-0123456789',
      'Environment="OPENAI_API_KEY=sk-live-0123456789abcdef"',
      'Environment="HERMES_HOME=/home/ada/.hermes"',
      'ExecStart=/usr/bin/node gateway --token abcdef0123456789',
    ].join('\n');
    const found = findEmbeddedSecrets(unit);
    expect(found).toHaveLength(2);
    expect(found.join('\n')).not.toContain('sk-live-0123456789abcdef');
    expect(found.join('\n')).not.toContain('abcdef0123456789');
  });
});
