import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The package version (read from package.json, which ships next to dist/ and src/). */
export const BRIDGE_VERSION: string = (require('../package.json') as { version: string }).version;
