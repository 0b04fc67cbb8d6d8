// pnpm hooks for this workspace. Only `beforePacking` is used: it shapes the manifest that
// `pnpm pack` / `pnpm publish` (and so `pnpm release`) put in a tarball. The workspace's own
// package.json files stay as they are. See docs/releasing.md.
'use strict';

/** The export condition that points workspace tools at `src/`; `src/` is never shipped. */
const SOURCE_CONDITION = '@hermes/source';

function withoutCondition(node) {
  if (Array.isArray(node)) return node.map(withoutCondition);
  if (node === null || typeof node !== 'object') return node;
  const result = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === SOURCE_CONDITION) continue;
    result[key] = withoutCondition(value);
  }
  return result;
}

module.exports = {
  hooks: {
    beforePacking(manifest) {
      if (manifest.exports !== undefined) manifest.exports = withoutCondition(manifest.exports);
      if (manifest.imports !== undefined) manifest.imports = withoutCondition(manifest.imports);
      // A consumer never installs devDependencies; published, the private workspace ones
      // (testkit, tsconfig) would read as `0.0.0` of packages that do not exist on the registry.
      delete manifest.devDependencies;
      return manifest;
    },
  },
};
