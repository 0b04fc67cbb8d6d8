import { defineConfig } from 'vitest/config';

/**
 * Shared vitest settings for every workspace package. Packages resolve each other through the
 * `@hermes/source` export condition, so tests run against sources, not stale builds.
 *
 * CI runs `pnpm test` with turbo at concurrency 2 and one worker per package, so at most two
 * test threads are busy at once on the 2-core CI machine.
 */
export const sharedTestConfig = defineConfig({
  resolve: { conditions: ['@hermes/source'] },
  ssr: { resolve: { conditions: ['@hermes/source'] } },
  test: {
    pool: 'threads',
    maxWorkers: process.env.CI ? 1 : 2,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The JSON report feeds the root `pnpm test` summary line (scripts/test-summary.mjs).
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
    exclude: ['**/node_modules/**', '**/dist/**'],
  },
});

/**
 * A package whose tests include measurements of responsiveness (a bound in milliseconds that
 * other load on the machine could break, not the code) lists them here. `vitest run` skips them;
 * `vitest run --mode timing` (the package's `test:timing` script) runs only them. The root
 * `pnpm test` runs every package's `test:timing` after all other tests, one package at a time, so
 * they measure on a machine nothing else of ours is loading.
 */
export function packageTestConfig(options: { timing?: readonly string[] } = {}) {
  const timing = [...(options.timing ?? [])];
  const { test: base = {}, ...rest } = sharedTestConfig;
  return defineConfig(({ mode }) => ({
    ...rest,
    // Spelled out rather than merged: vitest's mergeConfig would append to include/exclude.
    test:
      mode === 'timing'
        ? {
            ...base,
            include: timing,
            reporters: ['default', ['json', { outputFile: 'test-results/vitest-timing.json' }]],
            // One file at a time: two measurements must not load each other.
            fileParallelism: false,
          }
        : { ...base, exclude: [...(base.exclude ?? []), ...timing] },
  }));
}
