import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/bin.ts', 'src/contract/index.ts'],
  format: ['esm'],
  dts: { entry: ['src/index.ts', 'src/contract/index.ts'] },
  sourcemap: true,
  clean: true,
  platform: 'node',
  target: 'node20',
});
