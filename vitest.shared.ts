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
