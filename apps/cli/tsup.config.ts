import { defineConfig } from 'tsup';

export default defineConfig({
  // bin.ts is the tiny bootstrap (version, -p/--profile); main.ts and every command module are
  // separate chunks loaded on demand, so `hermes --version` never loads what `hermes chat` needs.
  entry: ['src/bin.ts', 'src/main.ts'],
  format: ['esm'],
  splitting: true,
  sourcemap: true,
  clean: true,
  platform: 'node',
  target: 'node20',
});
