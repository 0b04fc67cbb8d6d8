import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/bin.ts'],
  format: ['esm'],
  sourcemap: true,
  clean: true,
  platform: 'node',
  target: 'node20',
});
