import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

/**
 * Tests that measure responsiveness run in a second group, after every other test of the package
 * has finished, so that none of ours (the consumer type-check is CPU-heavy) loads the machine
 * while they measure.
 */
const timingTests = ['src/transport/heartbeat-flood.test.ts'];

const { include = [], exclude = [], pool, testTimeout, hookTimeout } = sharedTestConfig.test ?? {};
const project = (name: string, files: { include: string[]; exclude: string[] }, order: number) => ({
  resolve: sharedTestConfig.resolve,
  ssr: sharedTestConfig.ssr,
  test: { name, pool, testTimeout, hookTimeout, ...files, sequence: { groupOrder: order } },
});

export default mergeConfig(
  sharedTestConfig,
  defineConfig({
    test: {
      projects: [
        project('browser-broker', { include, exclude: [...exclude, ...timingTests] }, 0),
        project('browser-broker timing', { include: timingTests, exclude }, 1),
      ],
    },
  }),
);
