import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { beforeEach, describe, expect, it } from 'vitest';
import { readEnvFile } from './dotenv.js';
import { setEnvValue, setEnvValues } from './env-file-edit.js';
import { HermesConfigError } from './errors.js';

let home: string;

beforeEach(async () => {
  home = (await tempHome()).path;
});

describe('setEnvValue', () => {
  it('creates .env with mode 0600', () => {
    setEnvValue('OPENAI_API_KEY', 'sk-abc', home);
    expect(readEnvFile(home)).toEqual({ OPENAI_API_KEY: 'sk-abc' });
    expect(statSync(path.join(home, '.env')).mode & 0o777).toBe(0o600);
  });

  it('replaces an entry in place and keeps comments and other entries', () => {
    writeFileSync(path.join(home, '.env'), '# keys\nA=1\nexport B=2\nC=3\nB=dup\n');
    setEnvValue('B', 'new', home);
    expect(readFileSync(path.join(home, '.env'), 'utf8')).toBe('# keys\nA=1\nB=new\nC=3\n');
  });

  it('removes an entry with undefined', () => {
    writeFileSync(path.join(home, '.env'), 'A=1\nB=2\n');
    setEnvValue('A', undefined, home);
    expect(readEnvFile(home)).toEqual({ B: '2' });
  });

  it.each([
    'with spaces',
    'hash # inside',
    "it's",
    'say "hi"',
    'back\\slash and "quote" and \'tick\'',
  ])('reads %j back unchanged', (value) => {
    setEnvValue('V', value, home);
    expect(readEnvFile(home).V).toBe(value);
  });

  it('refuses a multi-line value and a bad name without touching the file', () => {
    writeFileSync(path.join(home, '.env'), 'A=1\n');
    for (const attempt of [
      () => setEnvValue('V', 'a\nb', home),
      () => setEnvValue('1X', 'a', home),
    ]) {
      try {
        attempt();
        expect.unreachable();
      } catch (error) {
        expect(HermesConfigError.isInstance(error)).toBe(true);
        expect(String(error)).not.toContain('a\nb');
      }
    }
    expect(readFileSync(path.join(home, '.env'), 'utf8')).toBe('A=1\n');
  });
});

describe('setEnvValues', () => {
  it('sets and removes several entries in one write, keeping every other line', () => {
    writeFileSync(
      path.join(home, '.env'),
      '# peers\nP_KEY=1\nOTHER=keep\nP__WORK_KEY=2\nexport P__HOME_KEY=3\nP_KEY=dup\n',
    );
    setEnvValues(
      { P_KEY: undefined, P__WORK_KEY: undefined, P__HOME_KEY: undefined, NEW: 'n e w' },
      home,
    );
    expect(readFileSync(path.join(home, '.env'), 'utf8')).toBe(
      "# peers\nOTHER=keep\nNEW='n e w'\n",
    );
  });

  it('refuses the whole change when one name or value is bad, writing nothing', () => {
    writeFileSync(path.join(home, '.env'), 'A=1\nB=2\n');
    for (const entries of [
      { A: undefined, '1X': 'a' },
      { A: undefined, V: 'a\nb' },
    ]) {
      expect(() => setEnvValues(entries, home)).toThrow(HermesConfigError);
    }
    expect(readFileSync(path.join(home, '.env'), 'utf8')).toBe('A=1\nB=2\n');
  });

  it('writes nothing when nothing changes: no .env and no home are created', () => {
    const missingHome = path.join(home, 'not-yet');
    setEnvValues({ GONE: undefined }, missingHome);
    expect(existsSync(missingHome)).toBe(false);
    writeFileSync(path.join(home, '.env'), 'A=1\n', { mode: 0o644 });
    setEnvValues({ A: '1', GONE: undefined }, home);
    expect(statSync(path.join(home, '.env')).mode & 0o777).toBe(0o644);
  });
});
