import { describe, expect, it } from 'vitest';
import { isArtifactId, mintArtifactId } from './artifact-id.js';
import { ARTIFACT_ID_PATTERN } from './constants.js';

describe('artifact ids', () => {
  it('mints 32 lowercase hex characters', () => {
    const artifactId = mintArtifactId();
    expect(artifactId).toMatch(ARTIFACT_ID_PATTERN);
    expect(artifactId).toHaveLength(32);
  });

  it('never mints the same id twice in a large sample', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => mintArtifactId()));
    expect(ids.size).toBe(10_000);
  });

  it.each([
    ['../escape'],
    ['not-hex!'],
    [''],
    ['ABCDEF0123456789ABCDEF0123456789'],
    ['abcdef0123456789abcdef012345678'],
    ['abcdef0123456789abcdef01234567890'],
    ['abcdef0123456789abcdef012345678/'],
    ['abcdef0123456789abcdef0123456789.tmp'],
  ])('refuses %j as an id', (value) => {
    expect(isArtifactId(value)).toBe(false);
  });

  it('refuses values that are not strings', () => {
    expect(isArtifactId(undefined)).toBe(false);
    expect(isArtifactId(42)).toBe(false);
  });
});
