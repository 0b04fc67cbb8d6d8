import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
  DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
  DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
  DEFAULT_STARTUP_RESTORE_DRAIN_TIMEOUT_S,
} from './defaults.js';
import { ConfigParseError, HermesConfigError } from './errors.js';
import { withHomeScope } from './home.js';
import { loadConfig } from './load-config.js';

async function homeWithConfig(yaml: string | undefined): Promise<string> {
  const home = (await tempHome()).path;
  if (yaml !== undefined) writeFileSync(path.join(home, 'config.yaml'), yaml);
  return home;
}

async function gatewayFor(yaml: string, env: NodeJS.ProcessEnv = {}) {
  return loadConfig({ home: await homeWithConfig(yaml), env }).config.gateway;
}

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

function watchdog(gateway: Awaited<ReturnType<typeof gatewayFor>>) {
  return [
    gateway.loopWatchdogProbeIntervalS,
    gateway.loopWatchdogProbeTimeoutS,
    gateway.loopWatchdogMaxStrikes,
  ];
}

describe('loadConfig: missing and invalid files', () => {
  it('gives the defaults when config.yaml is missing', async () => {
    const loaded = loadConfig({ home: await homeWithConfig(undefined), env: {} });
    expect(loaded.exists).toBe(false);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.gateway.loopWatchdog).toBe(true);
    expect(watchdog(loaded.config.gateway)).toEqual([30, 10, 3]);
    expect(loaded.config.apiServer).toMatchObject({ host: '127.0.0.1', port: 8642 });
    expect(loaded.config.delegation.maxIterations).toBe(250);
    expect(loaded.config.browser.extensionControl).toEqual({
      enabled: false,
      developerMode: false,
    });
  });

  it('names the file, line and column of invalid YAML', async () => {
    // The "@" that cannot start a plain value sits on line 2, column 18.
    const home = await homeWithConfig('gateway:\n  loop_watchdog: @on\n');
    const parseError = catchError(() => loadConfig({ home }));
    expect(parseError).toBeInstanceOf(ConfigParseError);
    const located = parseError as ConfigParseError;
    expect(located.code).toBe('config_parse_error');
    expect(located.file).toBe(path.join(home, 'config.yaml'));
    expect([located.line, located.column]).toEqual([2, 18]);
    expect(located.message.startsWith(`${located.file}:2:18: invalid YAML: `)).toBe(true);
  });

  it('locates an unclosed flow sequence at the line where it fails', async () => {
    const home = await homeWithConfig(
      'model:\n  default: gpt\n  provider: [unclosed\ngateway: {}\n',
    );
    const parseError = catchError(() => loadConfig({ home })) as ConfigParseError;
    expect(parseError.code).toBe('config_parse_error');
    expect([parseError.line, parseError.column]).toEqual([4, 1]);
  });

  it('reports an alias without an anchor as a located parse error that hides the alias name', async () => {
    const home = await homeWithConfig('model:\n  default: x\n  api_key: *sk-secret-123\n');
    const parseError = catchError(() => loadConfig({ home }));
    expect(parseError).toBeInstanceOf(ConfigParseError);
    expect([
      (parseError as ConfigParseError).line,
      (parseError as ConfigParseError).column,
    ]).toEqual([3, 12]);
    expect((parseError as ConfigParseError).message).toMatch(/has no anchor/);
    expect((parseError as ConfigParseError).message).not.toMatch(/sk-secret/);
  });

  it('reports an alias bomb as a parse error instead of expanding it', async () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const [index, name] of ['b', 'c', 'd', 'e'].entries()) {
      const previous = `*${'abcd'[index]}`;
      levels.push(`${name}: &${name} [${Array(9).fill(previous).join(', ')}]`);
    }
    const home = await homeWithConfig(`${levels.join('\n')}\n`);
    const parseError = catchError(() => loadConfig({ home }));
    expect(parseError).toBeInstanceOf(ConfigParseError);
    expect((parseError as ConfigParseError).message).toMatch(/aliases expand to too much data/);
  });

  it('still resolves ordinary anchors and aliases', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig(
        'defaults: &shared [web, files]\nplatform_toolsets:\n  cli: *shared\n',
      ),
      env: {},
    });
    expect(loaded.config.platformToolsets).toEqual({ cli: ['web', 'files'] });
  });

  it('rejects a top level that is not a mapping', async () => {
    const home = await homeWithConfig('- just\n- a list\n');
    expect(() => loadConfig({ home })).toThrow(/top level must be a mapping/);
    expect(() => loadConfig({ home })).toThrow(HermesConfigError);
  });

  it('reports duplicate keys as a YAML error with a location', async () => {
    const home = await homeWithConfig('model: a\nmodel: b\n');
    expect(() => loadConfig({ home })).toThrow(/config\.yaml:2:1: invalid YAML/);
  });

  it('treats an empty file as defaults', async () => {
    const loaded = loadConfig({ home: await homeWithConfig('# nothing yet\n'), env: {} });
    expect(loaded.exists).toBe(true);
    expect(loaded.config.gateway.loopWatchdogMaxStrikes).toBe(3);
  });
});

describe('loadConfig: loop watchdog knobs and clamps', () => {
  it('defaults to 30 / 10 / 3 and exports the same constants', async () => {
    expect(watchdog(await gatewayFor('{}'))).toEqual([
      DEFAULT_LOOP_WATCHDOG_INTERVAL_S,
      DEFAULT_LOOP_WATCHDOG_TIMEOUT_S,
      DEFAULT_LOOP_WATCHDOG_MAX_STRIKES,
    ]);
  });

  it('honours explicit top-level values (strikes 12 included)', async () => {
    const yaml =
      'loop_watchdog_probe_interval_s: 45\nloop_watchdog_probe_timeout_s: 15\nloop_watchdog_max_strikes: 12\n';
    expect(watchdog(await gatewayFor(yaml))).toEqual([45, 15, 12]);
  });

  it('honours a nested gateway: block', async () => {
    const yaml =
      'gateway:\n  loop_watchdog_probe_interval_s: 60\n  loop_watchdog_probe_timeout_s: 20\n  loop_watchdog_max_strikes: 20\n';
    expect(watchdog(await gatewayFor(yaml))).toEqual([60, 20, 20]);
  });

  it('degrades .inf / .nan to the defaults without an exception', async () => {
    const yaml =
      'loop_watchdog_probe_interval_s: .inf\nloop_watchdog_probe_timeout_s: .nan\nloop_watchdog_max_strikes: .inf\n';
    expect(watchdog(await gatewayFor(yaml))).toEqual([30, 10, 3]);
  });

  it('degrades 0 / -5 / 0 to the defaults (strikes 0 included)', async () => {
    const yaml =
      'loop_watchdog_probe_interval_s: 0\nloop_watchdog_probe_timeout_s: -5\nloop_watchdog_max_strikes: 0\n';
    expect(watchdog(await gatewayFor(yaml))).toEqual([30, 10, 3]);
  });

  it('degrades values above the ceiling to the defaults, not to the ceiling', async () => {
    const yaml =
      'loop_watchdog_probe_interval_s: 86400\nloop_watchdog_probe_timeout_s: 7200\nloop_watchdog_max_strikes: 1000000000\n';
    expect(watchdog(await gatewayFor(yaml))).toEqual([30, 10, 3]);
  });

  it('reads "off" under gateway: as disabled', async () => {
    expect((await gatewayFor('gateway:\n  loop_watchdog: "off"\n')).loopWatchdog).toBe(false);
  });

  it('reproduces the reference end-to-end case: false / strikes 12 / interval .inf', async () => {
    const gateway = await gatewayFor(
      'gateway:\n  loop_watchdog: false\n  loop_watchdog_max_strikes: 12\n  loop_watchdog_probe_interval_s: .inf\n',
    );
    expect([
      gateway.loopWatchdog,
      gateway.loopWatchdogMaxStrikes,
      gateway.loopWatchdogProbeIntervalS,
    ]).toEqual([false, 12, 30]);
  });

  it('lets a present top-level key win even when it is falsy', async () => {
    const gateway = await gatewayFor(
      'loop_watchdog: false\nloop_watchdog_max_strikes: 0\ngateway:\n  loop_watchdog: true\n  loop_watchdog_max_strikes: 9\n',
    );
    expect(gateway.loopWatchdog).toBe(false);
    // The top-level 0 is present, so it wins — and then degrades to the default, not to the nested 9.
    expect(gateway.loopWatchdogMaxStrikes).toBe(3);
  });
});

describe('loadConfig: warnings for ignored values', () => {
  it('names each knob that fell back to its default, without echoing the value', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig(
        [
          'loop_watchdog_probe_interval_s: 86400',
          'gateway:',
          '  loop_watchdog: flase',
          '  loop_watchdog_max_strikes: .inf',
          'delegation:',
          '  max_iterations: lots',
          'api_server:',
          '  port: 70000',
          'platforms:',
          '  telegram:',
          '    enabled: maybe',
          '',
        ].join('\n'),
      ),
      env: {},
    });
    expect(loaded.config.gateway.loopWatchdogProbeIntervalS).toBe(30);
    expect(loaded.config.gateway.loopWatchdog).toBe(true);
    const warnings = loaded.warnings.join('\n');
    expect(warnings).toMatch(
      /: loop_watchdog_probe_interval_s must be a finite number from 1 to 3600; using the default 30/,
    );
    expect(warnings).toMatch(
      /: gateway\.loop_watchdog must be true or false .*using the default true/,
    );
    expect(warnings).toMatch(
      /: gateway\.loop_watchdog_max_strikes must be a whole number from 1 to 1000/,
    );
    expect(warnings).toMatch(/: delegation\.max_iterations must be a whole number of at least 1/);
    expect(warnings).toMatch(/: api_server\.port must be a whole number from 0 to 65535/);
    expect(warnings).toMatch(/: platforms\.telegram\.enabled must be true or false/);
    expect(loaded.warnings).toHaveLength(6);
    for (const value of ['86400', 'flase', 'lots', '70000', 'maybe']) {
      expect(warnings).not.toContain(value);
    }
  });

  it('stays quiet for absent and null knobs', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig('gateway:\n  loop_watchdog:\ndelegation:\n  max_iterations: ~\n'),
      env: {},
    });
    expect(loaded.warnings).toEqual([]);
  });
});

describe('loadConfig: startup restore gate timeout', () => {
  async function restoreTimeout(yaml: string, env: NodeJS.ProcessEnv = {}) {
    const loaded = loadConfig({ home: await homeWithConfig(yaml), env });
    return { value: loaded.config.gateway.startupRestoreDrainTimeoutS, warnings: loaded.warnings };
  }

  it('defaults to 30 s and reads agent.gateway_startup_restore_drain_timeout', async () => {
    expect((await restoreTimeout('{}')).value).toBe(DEFAULT_STARTUP_RESTORE_DRAIN_TIMEOUT_S);
    expect(
      (await restoreTimeout('agent:\n  gateway_startup_restore_drain_timeout: 12.5\n')).value,
    ).toBe(12.5);
  });

  it('keeps values at or below 0, which mean "wait for all boot work"', async () => {
    expect(
      (await restoreTimeout('agent:\n  gateway_startup_restore_drain_timeout: 0\n')).value,
    ).toBe(0);
    expect(
      (await restoreTimeout('agent:\n  gateway_startup_restore_drain_timeout: -1\n')).value,
    ).toBe(-1);
  });

  it('lets HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT win over config', async () => {
    const yaml = 'agent:\n  gateway_startup_restore_drain_timeout: 12\n';
    expect((await restoreTimeout(yaml, { HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT: '5' })).value).toBe(
      5,
    );
    expect((await restoreTimeout(yaml, { HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT: '  ' })).value).toBe(
      12,
    );
  });

  it('degrades .inf and junk to the default with a warning naming the source', async () => {
    const fromFile = await restoreTimeout(
      'agent:\n  gateway_startup_restore_drain_timeout: .inf\n',
    );
    expect(fromFile.value).toBe(30);
    expect(fromFile.warnings.join('\n')).toMatch(
      /agent\.gateway_startup_restore_drain_timeout must be/,
    );
    const fromEnv = await restoreTimeout('{}', { HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT: 'soon' });
    expect(fromEnv.value).toBe(30);
    expect(fromEnv.warnings.join('\n')).toMatch(/HERMES_STARTUP_RESTORE_DRAIN_TIMEOUT must be/);
  });
});

describe('loadConfig: other sections', () => {
  it('lets GATEWAY_MULTIPLEX_PROFILES override config, ignoring junk with a warning', async () => {
    const yaml = 'gateway:\n  multiplex_profiles: true\n';
    expect((await gatewayFor(yaml, { GATEWAY_MULTIPLEX_PROFILES: 'off' })).multiplexProfiles).toBe(
      false,
    );
    expect((await gatewayFor(yaml, { GATEWAY_MULTIPLEX_PROFILES: '' })).multiplexProfiles).toBe(
      true,
    );
    const loaded = loadConfig({
      home: await homeWithConfig(yaml),
      env: { GATEWAY_MULTIPLEX_PROFILES: 'sometimes' },
    });
    expect(loaded.config.gateway.multiplexProfiles).toBe(true);
    expect(loaded.warnings.join('\n')).toMatch(
      /GATEWAY_MULTIPLEX_PROFILES="sometimes" is not a boolean/,
    );
  });

  it('turns browser extension-control flags on only for a literal true', async () => {
    const on = loadConfig({
      home: await homeWithConfig(
        'browser:\n  extension_control:\n    enabled: true\n    developer_mode: true\n',
      ),
    });
    expect(on.config.browser.extensionControl).toEqual({ enabled: true, developerMode: true });
    for (const value of ['"true"', 'yes', '1', '[true]', '{a: 1}']) {
      const loaded = loadConfig({
        home: await homeWithConfig(
          `browser:\n  extension_control:\n    enabled: ${value}\n    developer_mode: ${value}\n`,
        ),
      });
      expect(loaded.config.browser.extensionControl).toEqual({
        enabled: false,
        developerMode: false,
      });
    }
    const notMapping = loadConfig({ home: await homeWithConfig('browser: true\n') });
    expect(notMapping.config.browser.extensionControl.enabled).toBe(false);
  });

  it('accepts model as a bare id or a mapping with the legacy model alias', async () => {
    expect(loadConfig({ home: await homeWithConfig('model: gpt-5\n') }).config.model.model).toBe(
      'gpt-5',
    );
    const mapping = loadConfig({
      home: await homeWithConfig(
        'model:\n  model: legacy-id\n  provider: custom\n  base_url: http://127.0.0.1:9/v1\n  api_mode: chat_completions\n',
      ),
    }).config.model;
    expect(mapping).toEqual({
      model: 'legacy-id',
      provider: 'custom',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: '',
      apiMode: 'chat_completions',
    });
  });

  it('reports every base_url that is not an http(s) URL, without repeating it, and keeps it as written', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig(
        [
          'model:',
          '  default: m',
          '  base_url: ftp://user:hunter2@files/v1',
          'auxiliary:',
          '  review: { base_url: "not a url" }',
          'delegation:',
          '  base_url: http//missing-colon/v1',
          'providers:',
          '  lab: { base_url: "lab.internal:8080/v1" }',
          'custom_providers:',
          '  - { name: box, base_url: "https://box.internal/v1" }',
          'fallback_providers:',
          '  - { provider: custom, base_url: "file:///etc/passwd" }',
          '',
        ].join('\n'),
      ),
    });
    const warnings = loaded.warnings.map((warning) => warning.replace(/^.*config\.yaml: /, ''));
    expect(warnings).toEqual([
      'model.base_url is not a valid http(s) URL',
      'auxiliary.review.base_url is not a valid http(s) URL',
      'delegation.base_url is not a valid http(s) URL',
      'providers.lab.base_url is not a valid http(s) URL',
      'fallback_providers[0].base_url is not a valid http(s) URL',
    ]);
    expect(loaded.warnings.join('\n')).not.toContain('hunter2');
    expect(loaded.config.model.baseUrl).toBe('ftp://user:hunter2@files/v1');
  });

  it('says the legacy model.model is ignored when model.default names another model', async () => {
    const both = loadConfig({
      home: await homeWithConfig('model:\n  default: kept-model\n  model: ignored-model\n'),
    });
    expect(both.config.model.model).toBe('kept-model');
    expect(both.warnings).toEqual([
      expect.stringMatching(
        /config\.yaml: model\.model \(ignored-model\) is ignored: it is the legacy name of model\.default, which is set \(kept-model\) and wins; set model\.default instead$/,
      ),
    ]);
    const same = loadConfig({
      home: await homeWithConfig('model:\n  default: one-model\n  model: one-model\n'),
    });
    expect(same.warnings).toEqual([]);
  });

  it('replaces a wrongly typed value by its default and says where, without the value', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig(
        'model:\n  default: good-model\n  api_key: [sk-secret-in-a-list]\n  api_mode: telepathy\n',
      ),
    });
    expect(loaded.config.model.model).toBe('good-model');
    expect(loaded.config.model.apiKey).toBe('');
    expect(loaded.config.model.apiMode).toBe('');
    const warnings = loaded.warnings.join('\n');
    expect(warnings).toMatch(/model\.api_key/);
    expect(warnings).toMatch(/model\.api_mode/);
    expect(warnings).not.toMatch(/sk-secret/);
  });

  it('reads auxiliary.review with its five routing keys', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig(
        'auxiliary:\n  review:\n    provider: openrouter\n    model: anthropic/claude-opus-4.6\n  transient_retries: 9\n',
      ),
    });
    expect(loaded.config.auxiliary.review).toMatchObject({
      provider: 'openrouter',
      model: 'anthropic/claude-opus-4.6',
      baseUrl: '',
      apiKey: '',
      apiMode: '',
    });
    expect(loaded.config.auxiliary.transientRetries).toBe(2);
    expect(loaded.config.auxiliary.tasks.vision?.provider).toBe('auto');
  });

  it('keeps an auxiliary block’s own fallback_providers as written, and none when it declares none', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig(
        'auxiliary:\n  review:\n    base_url: http://127.0.0.1:9/v1\n    fallback_providers:\n      - openrouter\n      - base_url: http://127.0.0.1:8/v1\n        api_key: sk-backup\n  compression:\n    fallback_providers: []\n',
      ),
    });
    expect(loaded.config.auxiliary.review.fallbackProviders).toEqual([
      'openrouter',
      { base_url: 'http://127.0.0.1:8/v1', api_key: 'sk-backup' },
    ]);
    expect(loaded.config.auxiliary.tasks.compression?.fallbackProviders).toEqual([]);
    expect(loaded.config.auxiliary.tasks.vision?.fallbackProviders).toBeUndefined();
  });

  it('applies the delegation floors and env fallbacks', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig(
        'delegation:\n  max_spawn_depth: 0\n  child_timeout_seconds: 5\n  compression_threshold_tokens: 1000\n  reasoning_effort: false\n  orchestrator_enabled: "no"\n',
      ),
      env: { DELEGATION_MAX_CONCURRENT_CHILDREN: '4' },
    });
    const delegation = loaded.config.delegation;
    expect(delegation.maxSpawnDepth).toBe(1);
    expect(delegation.childTimeoutSeconds).toBe(30);
    expect(delegation.compressionThresholdTokens).toBe(0);
    expect(delegation.reasoningEffort).toBe('none');
    expect(delegation.orchestratorEnabled).toBe(false);
    expect(delegation.maxConcurrentChildren).toBe(4);
    expect(loaded.warnings.join('\n')).toMatch(/below floor 1/);
    expect(loaded.warnings.join('\n')).toMatch(
      /compression_threshold_tokens must be at least 16000/,
    );
  });

  it('reads platforms, platform_toolsets (coerced to strings) and api_server with the env key', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig(
        'platforms:\n  telegram:\n    enabled: yes\n    extra: {token_env: TG}\nplatform_toolsets:\n  api_server: [web, 42, hermes-api-server]\n  cli: not-a-list\napi_server:\n  port: 9000\n',
      ),
      env: { API_SERVER_KEY: 'from-env' },
    });
    expect(loaded.config.platforms.telegram?.enabled).toBe(true);
    expect(loaded.config.platforms.telegram?.settings.extra).toEqual({ token_env: 'TG' });
    expect(loaded.config.platformToolsets).toEqual({
      api_server: ['web', '42', 'hermes-api-server'],
    });
    expect(loaded.config.apiServer).toMatchObject({
      port: 9000,
      host: '127.0.0.1',
      key: 'from-env',
    });
  });

  it('reads gateway.multiplex_profile_allowlist and multiplex_profiles from either level', async () => {
    const nested = await gatewayFor(
      'gateway:\n  multiplex_profiles: yes\n  multiplex_profile_allowlist: [work, home]\n',
    );
    expect(nested.multiplexProfiles).toBe(true);
    expect(nested.multiplexProfileAllowlist).toEqual(['work', 'home']);
    const topLevel = await gatewayFor(
      'multiplex_profiles: false\ngateway:\n  multiplex_profiles: true\n',
    );
    expect(topLevel.multiplexProfiles).toBe(false);
    expect(topLevel.multiplexProfileAllowlist).toBeUndefined();
  });

  it('keeps unknown keys in raw', async () => {
    const loaded = loadConfig({
      home: await homeWithConfig('honcho:\n  workspace: x\nmodel: m\n'),
    });
    expect(loaded.raw.honcho).toEqual({ workspace: 'x' });
  });
});

describe('loadConfig: API_SERVER_KEY as a secret', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("reads the process environment outside a scope, but never the owner's key inside a profile's secret scope", async () => {
    vi.stubEnv('API_SERVER_KEY', 'owner-key');
    const home = await homeWithConfig('{}');
    expect(loadConfig({ home }).config.apiServer.key).toBe('owner-key');
    withHomeScope({ home, secrets: {} }, () => {
      expect(loadConfig().config.apiServer.key).toBeUndefined();
    });
    withHomeScope({ home, secrets: { API_SERVER_KEY: 'profile-key' } }, () => {
      expect(loadConfig().config.apiServer.key).toBe('profile-key');
    });
  });

  it('prefers api_server.key in config.yaml over any secret', async () => {
    const home = await homeWithConfig('api_server:\n  key: from-config\n');
    expect(loadConfig({ home, env: { API_SERVER_KEY: 'from-env' } }).config.apiServer.key).toBe(
      'from-config',
    );
  });
});
