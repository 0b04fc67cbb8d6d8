import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_BACKUP_COUNT,
  configSetKey,
  readConfigData,
  setConfigValue,
} from './config-file.js';
import { HermesConfigError } from './errors.js';
import { loadConfig } from './load-config.js';

const ORIGINAL = `# operator notes: keep this comment
model:
  default: first-model # inline comment
honcho:
  workspace: team-x
gateway:
  loop_watchdog_max_strikes: 5
`;

async function home(initial?: string): Promise<string> {
  const dir = (await tempHome()).path;
  if (initial !== undefined) writeFileSync(path.join(dir, 'config.yaml'), initial);
  return dir;
}

describe('setConfigValue', () => {
  it('edits one dotted key and keeps comments and unknown sections', async () => {
    const dir = await home(ORIGINAL);
    setConfigValue('gateway.loop_watchdog_max_strikes', 12, dir);
    const text = readFileSync(path.join(dir, 'config.yaml'), 'utf8');
    expect(text).toContain('# operator notes: keep this comment');
    expect(text).toContain('# inline comment');
    expect(text).toContain('workspace: team-x');
    expect(loadConfig({ home: dir }).config.gateway.loopWatchdogMaxStrikes).toBe(12);
    expect(readConfigData(dir).honcho).toEqual({ workspace: 'team-x' });
  });

  it('creates missing sections and the file itself', async () => {
    const dir = await home();
    setConfigValue('browser.extension_control.enabled', true, dir);
    expect(loadConfig({ home: dir }).config.browser.extensionControl.enabled).toBe(true);
  });

  it('writes the file with mode 0600 and no temp files left behind', async () => {
    const dir = await home(ORIGINAL);
    setConfigValue('model.default', 'second-model', dir);
    expect(statSync(path.join(dir, 'config.yaml')).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('sets the model id for `model <id>` when model is a section, keeping its provider, base URL and key', async () => {
    const dir = await home(
      'model:\n  default: old-model\n  base_url: http://127.0.0.1:8080/v1\n  api_key: sk-local\n',
    );
    expect(configSetKey('model', 'new-model', dir)).toBe('model.default');
    setConfigValue('model', 'new-model', dir);
    expect(readConfigData(dir).model).toEqual({
      default: 'new-model',
      base_url: 'http://127.0.0.1:8080/v1',
      api_key: 'sk-local',
    });
    // A mapping given whole replaces it; a scalar model stays a scalar.
    setConfigValue('model', { default: 'whole' }, dir);
    expect(readConfigData(dir).model).toEqual({ default: 'whole' });
    const scalar = await home('model: plain\n');
    expect(configSetKey('model', 'other', scalar)).toBe('model');
    setConfigValue('model', 'other', scalar);
    expect(readConfigData(scalar).model).toBe('other');
  });

  it('refuses to replace another section with a value, naming a key to set instead, and writes nothing', async () => {
    const dir = await home('gateway:\n  loop_watchdog: true\n  loop_watchdog_max_strikes: 3\n');
    const before = readFileSync(path.join(dir, 'config.yaml'), 'utf8');
    expect(() => setConfigValue('gateway', 5, dir)).toThrow(
      /cannot set gateway to a value: it is a section of 2 key\(s\); set one of them, e\.g\. gateway\.loop_watchdog$/,
    );
    expect(() => configSetKey('gateway', 'x', dir)).toThrow(/cannot set gateway to a value/);
    expect(readFileSync(path.join(dir, 'config.yaml'), 'utf8')).toBe(before);
    expect(existsSync(path.join(dir, 'config.yaml.bak.1'))).toBe(false);
    // An empty section, or a mapping value, may be set.
    const empty = await home('gateway: {}\n');
    setConfigValue('gateway', 'x', empty);
    expect(readConfigData(empty).gateway).toBe('x');
  });

  it(`keeps a ring of ${CONFIG_BACKUP_COUNT} backups, newest first`, async () => {
    const dir = await home('model: v0\n');
    for (let version = 1; version <= CONFIG_BACKUP_COUNT + 2; version++) {
      setConfigValue('model', `v${version}`, dir);
    }
    const file = path.join(dir, 'config.yaml');
    expect(readConfigData(dir).model).toBe(`v${CONFIG_BACKUP_COUNT + 2}`);
    for (let index = 1; index <= CONFIG_BACKUP_COUNT; index++) {
      expect(readFileSync(`${file}.bak.${index}`, 'utf8')).toContain(
        `v${CONFIG_BACKUP_COUNT + 2 - index}`,
      );
    }
    expect(existsSync(`${file}.bak.${CONFIG_BACKUP_COUNT + 1}`)).toBe(false);
  });

  it('writes through a symlinked config.yaml (and a chain of links), leaving the links in place', async () => {
    const dir = await home();
    const dotfiles = path.join(dir, 'dotfiles');
    mkdirSync(dotfiles);
    const real = path.join(dotfiles, 'hermes.yaml');
    writeFileSync(real, ORIGINAL);
    // config.yaml -> (relative) current.yaml -> (absolute) dotfiles/hermes.yaml
    symlinkSync('current.yaml', path.join(dir, 'config.yaml'));
    symlinkSync(real, path.join(dir, 'current.yaml'));
    setConfigValue('model.default', 'second-model', dir);
    expect(lstatSync(path.join(dir, 'config.yaml')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(dir, 'config.yaml'))).toBe('current.yaml');
    expect(readlinkSync(path.join(dir, 'current.yaml'))).toBe(real);
    expect(readFileSync(real, 'utf8')).toContain('default: second-model');
    expect(readFileSync(real, 'utf8')).toContain('# operator notes: keep this comment');
    expect(loadConfig({ home: dir }).config.model.model).toBe('second-model');
    // The backup holds the previous content, next to the link.
    expect(readFileSync(path.join(dir, 'config.yaml.bak.1'), 'utf8')).toBe(ORIGINAL);
    // No temp file left next to the link or the target.
    expect(readdirSync(dotfiles)).toEqual(['hermes.yaml']);
  });

  it('creates the file a dangling config.yaml link points to', async () => {
    const dir = await home();
    const real = path.join(dir, 'elsewhere.yaml');
    symlinkSync(real, path.join(dir, 'config.yaml'));
    setConfigValue('model.default', 'fresh', dir);
    expect(lstatSync(path.join(dir, 'config.yaml')).isSymbolicLink()).toBe(true);
    expect(loadConfig({ home: dir }).config.model.model).toBe('fresh');
    expect(statSync(real).isFile()).toBe(true);
  });

  it('refuses a config.yaml link that loops, without touching it', async () => {
    const dir = await home();
    symlinkSync('loop-b.yaml', path.join(dir, 'config.yaml'));
    symlinkSync('loop-a.yaml', path.join(dir, 'loop-b.yaml'));
    symlinkSync('loop-b.yaml', path.join(dir, 'loop-a.yaml'));
    expect(() => setConfigValue('model.default', 'x', dir)).toThrow(/ELOOP/);
    expect(lstatSync(path.join(dir, 'config.yaml')).isSymbolicLink()).toBe(true);
  });

  it('refuses to descend through a value that is not a section, and writes nothing', async () => {
    const initial = 'gateway: off\nmodel: true\ntoolsets: [file]\n';
    const dir = await home(initial);
    expect(() => setConfigValue('gateway.loop_watchdog', true, dir)).toThrow(
      /cannot set gateway\.loop_watchdog: gateway is a value, not a section$/,
    );
    // `true` is not a model id, so it is not the `model: <id>` shorthand either.
    expect(() => setConfigValue('model.base_url', 'http://127.0.0.1:9/v1', dir)).toThrow(
      /cannot set model\.base_url: model is a value, not a section$/,
    );
    expect(() => setConfigValue('toolsets.file', 'x', dir)).toThrow(
      /toolsets is a value, not a section$/,
    );
    expect(readFileSync(path.join(dir, 'config.yaml'), 'utf8')).toBe(initial);
    expect(existsSync(path.join(dir, 'config.yaml.bak.1'))).toBe(false);
  });

  it('turns a bare model id into the model section it stands for when a model key is set, the id kept as model.default', async () => {
    const dir = await home('# the model I use\nmodel: bare-id # pinned\nagent:\n  max_turns: 9\n');
    expect(configSetKey('model.base_url', 'http://127.0.0.1:9/v1', dir)).toBe('model.base_url');
    setConfigValue('model.base_url', 'http://127.0.0.1:9/v1', dir);
    setConfigValue('model.api_key', 'sk-local', dir);
    expect(readConfigData(dir).model).toEqual({
      default: 'bare-id',
      base_url: 'http://127.0.0.1:9/v1',
      api_key: 'sk-local',
    });
    const text = readFileSync(path.join(dir, 'config.yaml'), 'utf8');
    expect(text).toContain('# the model I use\n');
    expect(text).toContain('default: bare-id # pinned\n');
    expect(text).toContain('max_turns: 9');
    const { config, warnings } = loadConfig({ home: dir });
    expect(warnings).toEqual([]);
    expect(config.model).toMatchObject({
      model: 'bare-id',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-local',
    });
    // Setting model.default itself replaces the id; a numeric id is an id too.
    const numeric = await home('model: 4\n');
    setConfigValue('model.default', 'five', numeric);
    expect(readConfigData(numeric).model).toEqual({ default: 'five' });
  });

  it('lets a fresh home set the model first and its endpoint after', async () => {
    const dir = await home();
    setConfigValue('model', 'test-model', dir);
    expect(readConfigData(dir).model).toBe('test-model');
    setConfigValue('model.base_url', 'http://127.0.0.1:9/v1', dir);
    expect(loadConfig({ home: dir }).config.model).toMatchObject({
      model: 'test-model',
      baseUrl: 'http://127.0.0.1:9/v1',
    });
  });

  it.each(['', '.', 'a..b', 'gateway.', '../etc', 'a b'])('rejects the key %j', async (key) => {
    const dir = await home(ORIGINAL);
    let code: string | undefined;
    try {
      setConfigValue(key, 1, dir);
    } catch (error) {
      code = HermesConfigError.isInstance(error) ? error.code : undefined;
    }
    expect(code).toBe('invalid_config_key');
    expect(readFileSync(path.join(dir, 'config.yaml'), 'utf8')).toBe(ORIGINAL);
  });

  it('does not overwrite a file it cannot parse', async () => {
    const dir = await home('model: [broken\n');
    expect(() => setConfigValue('model', 'x', dir)).toThrow(/invalid YAML/);
    expect(readFileSync(path.join(dir, 'config.yaml'), 'utf8')).toBe('model: [broken\n');
  });
});
