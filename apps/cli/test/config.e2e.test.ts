import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startModelServer } from '@hermes/testkit';
import { describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { parseJson, runCli, testHome } from './helpers.js';

describe('hermes config', () => {
  it('sets values with their YAML types, keeps comments and unknown keys, and reads them back', async () => {
    const { env, home } = await testHome();
    await writeFile(path.join(home, 'config.yaml'), '# mine\ncustom_thing: 7 # keep\n');
    expect((await runCli(['config', 'set', 'model.default', 'gpt-4.1'], { env })).code).toBe(0);
    expect((await runCli(['config', 'set', 'agent.max_turns', '30'], { env })).code).toBe(0);
    expect((await runCli(['config', 'set', 'toolsets', '[file, todo]'], { env })).code).toBe(0);
    const text = await readFile(path.join(home, 'config.yaml'), 'utf8');
    expect(text).toContain('# mine');
    expect(text).toContain('custom_thing: 7 # keep');
    expect(
      parseJson(await runCli(['config', 'get', 'model.default', '--json'], { env })),
    ).toMatchObject({
      value: 'gpt-4.1',
    });
    expect(
      parseJson(await runCli(['config', 'get', 'agent.max_turns', '--json'], { env })),
    ).toMatchObject({
      value: 30,
    });
    expect((await runCli(['config', 'get', 'toolsets'], { env })).stdout).toBe('- file\n- todo\n');
  });

  it('changes the model with `config set model <id>`, keeping its provider, base URL and key, and never replaces another section with a value', async () => {
    const { env, home } = await testHome();
    const file = path.join(home, 'config.yaml');
    await writeFile(
      file,
      'model:\n  default: old-model\n  base_url: http://127.0.0.1:8080/v1\n  api_key: sk-local-key\n',
    );
    const set = await runCli(['config', 'set', 'model', 'new-model'], { env });
    expect(set.code).toBe(0);
    expect(set.stdout).toBe(`Set model.default in ${file}\n`);
    expect(parseJson(await runCli(['config', 'get', 'model', '--json'], { env }))).toMatchObject({
      value: { default: 'new-model', base_url: 'http://127.0.0.1:8080/v1' },
    });
    const gateway = await runCli(['config', 'set', 'gateway.loop_watchdog', 'true'], { env });
    expect(gateway.code).toBe(0);
    const kept = await readFile(file, 'utf8');
    const wiped = await runCli(['config', 'set', 'gateway', 'off'], { env });
    expect(wiped.code).toBe(EXIT.usage);
    expect(wiped.stderr).toContain(
      'cannot set gateway to a value: it is a section of 1 key(s); set one of them, e.g. gateway.loop_watchdog',
    );
    expect(await readFile(file, 'utf8')).toBe(kept);
  });

  it('sets the model first on a fresh home and its endpoint and key after, and a chat turn uses all three', async () => {
    const { env, home } = await testHome();
    const file = path.join(home, 'config.yaml');
    const apiKey = 'sk-walk-key-0123456789';
    const model = await startModelServer({ script: [{ text: 'hello from test-model' }], apiKey });
    onTestFinished(() => model.close());
    const steps = [
      ['model', 'test-model'],
      ['model.base_url', model.baseUrl],
      ['model.api_key', apiKey],
    ] as const;
    for (const [key, value] of steps) {
      const set = await runCli(['config', 'set', key, value], { env });
      expect(set.code, `config set ${key}: ${set.stderr}`).toBe(EXIT.ok);
      expect(set.stdout).toBe(`Set ${key} in ${file}\n`);
    }
    expect(parseJson(await runCli(['config', 'get', 'model', '--json'], { env }))).toEqual({
      key: 'model',
      value: { default: 'test-model', base_url: model.baseUrl, api_key: '********' },
      file,
    });
    expect((await runCli(['config', 'get', 'model.default'], { env })).stdout).toBe('test-model\n');
    const chat = await runCli(['chat', '-q', 'hi'], { env });
    expect(chat.code).toBe(EXIT.ok);
    expect(chat.stdout).toBe('hello from test-model\n');
    expect(model.modelRequests).toEqual([
      expect.objectContaining({
        body: expect.objectContaining({ model: 'test-model' }),
        headers: expect.objectContaining({ authorization: `Bearer ${apiKey}` }),
      }),
    ]);
  });

  it('routes environment names to .env (0600) and masks secrets unless --reveal', async () => {
    const { env, home } = await testHome();
    const set = await runCli(['config', 'set', 'OPENAI_API_KEY', 'sk-secret-value-123'], { env });
    expect(set.code).toBe(0);
    expect(set.stdout).not.toContain('sk-secret');
    expect(await readFile(path.join(home, '.env'), 'utf8')).toBe(
      'OPENAI_API_KEY=sk-secret-value-123\n',
    );
    expect(await readFile(path.join(home, 'config.yaml'), 'utf8').catch(() => '')).not.toContain(
      'sk-secret',
    );
    expect((await runCli(['config', 'get', 'OPENAI_API_KEY'], { env })).stdout).toBe('********\n');
    expect((await runCli(['config', 'get', 'OPENAI_API_KEY', '--reveal'], { env })).stdout).toBe(
      'sk-secret-value-123\n',
    );
    await runCli(['config', 'set', 'model.api_key', 'sk-in-yaml-999'], { env });
    const whole = await runCli(['config', 'get', '--json'], { env });
    expect(whole.stdout).not.toContain('sk-in-yaml-999');
  });

  it('says how to set a key that is not set (exit 1) and refuses a malformed key (exit 2)', async () => {
    const { env } = await testHome();
    const missing = await runCli(['config', 'get', 'model.default'], { env });
    expect(missing.code).toBe(EXIT.failure);
    expect(missing.stderr).toContain('hermes config set model.default <value>');
    expect((await runCli(['config', 'set', 'model..x', 'y'], { env })).code).toBe(EXIT.usage);
    expect((await runCli(['config', 'set', 'OPENAI_KEY', 'two\nlines'], { env })).code).toBe(
      EXIT.usage,
    );
  });

  it('exits 1 for a value that causes a warning, with --json as without', async () => {
    const { env } = await testHome();
    const plain = await runCli(['config', 'set', 'agent.max_turns', 'abc'], { env });
    expect(plain.code).toBe(EXIT.failure);
    expect(plain.stderr).toContain('max_turns');
    const asJson = await runCli(['config', 'set', 'agent.max_turns', 'abc', '--json'], { env });
    expect(asJson.code).toBe(EXIT.failure);
    const printed = parseJson<{ key: string; warnings: string[] }>(asJson);
    expect(printed.key).toBe('agent.max_turns');
    expect(printed.warnings.join('\n')).toContain('max_turns');
    expect(asJson.stderr).toContain('max_turns');
    const fine = await runCli(['config', 'set', 'agent.max_turns', '12', '--json'], { env });
    expect(fine.code).toBe(EXIT.ok);
    expect(parseJson<{ warnings: string[] }>(fine).warnings).toEqual([]);
  });

  it('warns (exit 1) when model.model is set beside a model.default that wins over it', async () => {
    const { env } = await testHome();
    expect((await runCli(['config', 'set', 'model', 'first-model'], { env })).code).toBe(EXIT.ok);
    const legacy = await runCli(['config', 'set', 'model.model', 'second-model'], { env });
    expect(legacy.code).toBe(EXIT.failure);
    expect(legacy.stderr).toContain(
      'model.model (second-model) is ignored: it is the legacy name of model.default, which is set (first-model) and wins; set model.default instead',
    );
    const fixed = await runCli(['config', 'set', 'model.default', 'second-model'], { env });
    expect(fixed.code).toBe(EXIT.ok);
    expect(fixed.stderr).toBe('');
  });

  it('prints its paths', async () => {
    const { env, home } = await testHome();
    expect(parseJson(await runCli(['config', 'path', '--json'], { env }))).toEqual({
      home,
      config: path.join(home, 'config.yaml'),
      env: path.join(home, '.env'),
      state_db: path.join(home, 'state.db'),
      logs: path.join(home, 'logs'),
    });
  });

  it('edits config.yaml with $EDITOR and checks it afterwards', async () => {
    const { env, home, userHome } = await testHome();
    const editor = path.join(userHome, 'editor.sh');
    await writeFile(editor, '#!/bin/sh\nprintf "model:\\n  default: edited\\n" > "$1"\n');
    await chmod(editor, 0o755);
    const ok = await runCli(['config', 'edit'], { env: { ...env, EDITOR: editor } });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain('is valid');
    expect(await readFile(path.join(home, 'config.yaml'), 'utf8')).toContain('default: edited');

    const broken = path.join(userHome, 'broken.sh');
    await writeFile(broken, '#!/bin/sh\nprintf "model: [unclosed\\n" > "$1"\n');
    await chmod(broken, 0o755);
    const bad = await runCli(['config', 'edit'], { env: { ...env, VISUAL: broken } });
    expect(bad.code).toBe(EXIT.failure);
    expect(bad.stderr).toMatch(/config\.yaml:\d+:\d+: invalid YAML/);
    expect(bad.stderr).toContain('hermes config edit');
  });
});
