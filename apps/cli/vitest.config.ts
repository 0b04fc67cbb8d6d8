import { mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

export default mergeConfig(sharedTestConfig, {
  // The e2e suites start the built bin, gateways and model servers: give them room on a loaded
  // 2-core machine.
  test: { testTimeout: 60_000, hookTimeout: 60_000 },
});
