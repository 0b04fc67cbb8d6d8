import { readFileSync } from 'node:fs';

/** The gateway's version, from its package.json (read once). */
export const GATEWAY_VERSION: string = (() => {
  try {
    const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
    const version = (JSON.parse(text) as { version?: unknown }).version;
    return typeof version === 'string' ? version : '0.0.0';
  } catch {
    return '0.0.0';
  }
})();
