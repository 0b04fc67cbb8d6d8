import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bumpVersion, firstReleaseProblem, parseChangeset, pendingBumps } from './workspace.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function workspace(changesets: Record<string, string>, packages: Record<string, boolean>) {
  const root = mkdtempSync(path.join(tmpdir(), 'pack-check-workspace-'));
  folders.push(root);
  mkdirSync(path.join(root, '.changeset'));
  writeFileSync(path.join(root, '.changeset', 'config.json'), '{}');
  writeFileSync(path.join(root, '.changeset', 'README.md'), '# not a changeset');
  for (const [file, text] of Object.entries(changesets)) {
    writeFileSync(path.join(root, '.changeset', file), text);
  }
  for (const [name, released] of Object.entries(packages)) {
    mkdirSync(path.join(root, name), { recursive: true });
    if (released) writeFileSync(path.join(root, name, 'CHANGELOG.md'), '# changelog');
  }
  return root;
}

describe('changesets', () => {
  it('reads the packages and bumps of a changeset front matter', () => {
    const text = '---\n"@hermes/config": minor\n\'@hermes/agent\': patch\n---\n\nText: major\n';
    expect([...parseChangeset(text)]).toEqual([
      ['@hermes/config', 'minor'],
      ['@hermes/agent', 'patch'],
    ]);
  });

  it('keeps the highest pending bump per package across changeset files', () => {
    const root = workspace(
      {
        'a.md': '---\n"@hermes/config": patch\n---\nfix',
        'b.md': '---\n"@hermes/config": minor\n"@hermes/agent": patch\n---\nfeature',
      },
      {},
    );
    const bumps = pendingBumps(root);
    expect(bumps.get('@hermes/config')).toEqual({ bump: 'minor', files: ['a.md', 'b.md'] });
    expect(bumps.get('@hermes/agent')?.bump).toBe('patch');
  });

  it('bumps versions the way changesets does', () => {
    expect(bumpVersion('0.0.0', 'minor')).toBe('0.1.0');
    expect(bumpVersion('0.1.0', 'minor')).toBe('0.2.0');
    expect(bumpVersion('0.1.3', 'patch')).toBe('0.1.4');
    expect(bumpVersion('0.4.1', 'major')).toBe('1.0.0');
  });
});

describe('firstReleaseProblem', () => {
  const entry = (root: string, name: string, version: string) => ({
    name: `@hermes/${name}`,
    version,
    directory: path.join(root, name),
    private: false,
  });

  it('accepts an unreleased package at 0.0.0 with a minor changeset (first release 0.1.0)', () => {
    const root = workspace({ 'x.md': '---\n"@hermes/fresh": minor\n---\n' }, { fresh: false });
    expect(firstReleaseProblem(entry(root, 'fresh', '0.0.0'), pendingBumps(root))).toBeUndefined();
  });

  it('names the version an unreleased package would really publish', () => {
    const root = workspace(
      {
        'a.md': '---\n"@hermes/early": minor\n---\n',
        'b.md': '---\n"@hermes/patchy": patch\n---\n',
      },
      { early: false, patchy: false, silent: false },
    );
    const bumps = pendingBumps(root);
    expect(firstReleaseProblem(entry(root, 'early', '0.1.0'), bumps)).toContain(
      'its first release would be 0.2.0',
    );
    expect(firstReleaseProblem(entry(root, 'patchy', '0.0.0'), bumps)).toContain('would be 0.0.1');
    expect(firstReleaseProblem(entry(root, 'silent', '0.0.0'), bumps)).toContain(
      'a release would publish 0.0.0',
    );
  });

  it('leaves a released package (it has a changelog) to its changesets', () => {
    const root = workspace({}, { config: true });
    expect(firstReleaseProblem(entry(root, 'config', '0.3.1'), pendingBumps(root))).toBeUndefined();
  });
});
