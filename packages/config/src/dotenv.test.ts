import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import { applyEnvFile, readEnvFile } from './dotenv.js';
import { HermesConfigError } from './errors.js';

describe('.env loading', () => {
  it('parses quoted values, comments and export-free lines', async () => {
    const home = (await tempHome()).path;
    writeFileSync(
      path.join(home, '.env'),
      '# secrets\nOPENAI_API_KEY=sk-test-123\nQUOTED="two words"\nEMPTY=\n',
    );
    expect(readEnvFile(home)).toEqual({
      OPENAI_API_KEY: 'sk-test-123',
      QUOTED: 'two words',
      EMPTY: '',
    });
  });

  it('never overrides a variable already set and returns only names', async () => {
    const home = (await tempHome()).path;
    writeFileSync(path.join(home, '.env'), 'API_SERVER_KEY=from-file\nNEW_ONE=value\n');
    const env: NodeJS.ProcessEnv = { API_SERVER_KEY: 'from-shell' };
    expect(applyEnvFile(home, env)).toEqual(['NEW_ONE']);
    expect(env.API_SERVER_KEY).toBe('from-shell');
    expect(env.NEW_ONE).toBe('value');
  });

  it('treats a missing file as empty', async () => {
    const home = (await tempHome()).path;
    expect(readEnvFile(home)).toEqual({});
  });

  it('reports an unreadable .env as a config error naming the file', async () => {
    const home = (await tempHome()).path;
    mkdirSync(path.join(home, '.env'));
    let caught: unknown;
    try {
      readEnvFile(home);
    } catch (error) {
      caught = error;
    }
    expect(HermesConfigError.isInstance(caught)).toBe(true);
    expect((caught as HermesConfigError).code).toBe('config_invalid');
    expect((caught as HermesConfigError).message).toBe(
      `${path.join(home, '.env')}: cannot be read (EISDIR)`,
    );
  });
});
