import { defineConfig } from 'tsup';

export default defineConfig({
  // `readme` is its own entry without vitest, for tools that run outside a test (pack-check).
  entry: { index: 'src/index.ts', readme: 'src/readme/index.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  platform: 'node',
  external: ['vitest', 'typescript', 'tsx'],
  target: 'node20',
});
