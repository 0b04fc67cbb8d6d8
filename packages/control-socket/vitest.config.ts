import { mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// Forks, not threads: the server sets the process umask around bind, which Node allows only on
// the main thread of a process.
export default mergeConfig(sharedTestConfig, { test: { pool: 'forks' } });
