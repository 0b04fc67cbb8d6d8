import { describe, expect, it } from 'vitest';
import {
  javascriptEntryPoints,
  type ManifestContext,
  manifestProblems,
  typedEntryPoints,
} from './manifest.js';
import type { PackageManifest } from './pack.js';

const LICENSE = 'MIT License\n\nCopyright (c) 2026 hermes-ts contributors\n';

const context: ManifestContext = {
  publicPackages: new Set(['@hermes/config', '@hermes/demo']),
  privatePackages: new Set(['@hermes/testkit']),
  rootLicense: LICENSE,
  licenseFile: LICENSE,
  readme: '# demo',
};

const published: PackageManifest = {
  name: '@hermes/demo',
  version: '0.0.0',
  license: 'MIT',
  exports: {
    '.': { types: './dist/index.d.ts', default: './dist/index.js' },
    './client': { types: './dist/client/index.d.ts', default: './dist/client/index.js' },
    './schema/demo.schema.json': './schema/demo.schema.json',
    './package.json': './package.json',
  },
  main: './dist/index.js',
  types: './dist/index.d.ts',
  dependencies: { '@hermes/config': '^0.1.0', valibot: '^1.5.0' },
};

describe('manifestProblems', () => {
  it('passes a manifest as pnpm publishes it', () => {
    expect(manifestProblems(published, context)).toEqual([]);
  });

  it('flags the source condition, local ranges, private dependencies and devDependencies', () => {
    const problems = manifestProblems(
      {
        ...published,
        exports: { '.': { '@hermes/source': './src/index.ts', default: './dist/index.js' } },
        dependencies: { '@hermes/config': 'workspace:^', '@hermes/testkit': '0.0.0' },
        devDependencies: { '@hermes/testkit': '0.0.0' },
      },
      context,
    );
    expect(problems).toHaveLength(4);
    expect(problems[0]).toContain('exports["."]["@hermes/source"]');
    expect(problems[1]).toContain('dependencies["@hermes/config"] is "workspace:^"');
    expect(problems[2]).toContain('"@hermes/testkit"] is a private workspace package');
    expect(problems[3]).toContain('devDependencies are published (@hermes/testkit');
  });

  it('flags a missing, different or unlicensed LICENSE and a missing README', () => {
    expect(manifestProblems(published, { ...context, licenseFile: undefined })[0]).toContain(
      'LICENSE: the tarball has none',
    );
    expect(manifestProblems(published, { ...context, licenseFile: 'ISC' })[0]).toContain(
      'differs from the root LICENSE',
    );
    expect(manifestProblems({ ...published, license: 'ISC' }, context)[0]).toContain(
      '"license" is "ISC"',
    );
    expect(manifestProblems(published, { ...context, readme: undefined })).toEqual([
      'README: the tarball has no README.md',
    ]);
  });
});

describe('entry points', () => {
  it('lists JavaScript subpaths, leaving out JSON and package.json', () => {
    expect(javascriptEntryPoints(published)).toEqual(['.', './client']);
    expect(typedEntryPoints(published)).toEqual(['.', './client']);
  });

  it('reads a bare conditions object or a string as the root entry point', () => {
    expect(javascriptEntryPoints({ ...published, exports: './dist/index.js' })).toEqual(['.']);
    expect(
      javascriptEntryPoints({
        ...published,
        exports: { types: './dist/index.d.ts', default: './dist/index.js' },
      }),
    ).toEqual(['.']);
  });
});
