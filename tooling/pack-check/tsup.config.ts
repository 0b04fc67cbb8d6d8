import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/cli.ts', 'src/index.ts'],
  format: ['esm'],
  dts: { entry: 'src/index.ts' },
  sourcemap: true,
  clean: true,
  platform: 'node',
  target: 'node20',
  // The checker loads its tools from node_modules at run time (TypeScript, publint, attw).
  external: ['typescript', 'publint', 'publint/utils', '@publint/pack', /^@arethetypeswrong\//],
});
