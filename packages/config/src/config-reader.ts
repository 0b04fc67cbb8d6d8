import { statSync } from 'node:fs';
import { getConfigPath } from './config-file.js';
import { getHermesHome } from './home.js';
import { type LoadedConfig, loadConfig } from './load-config.js';

export interface ConfigReader {
  /** The current config of the home, re-read only when config.yaml changed on disk. */
  read(): LoadedConfig;
}

function fingerprint(file: string): string {
  try {
    const stat = statSync(file, { bigint: true });
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}`;
  } catch {
    return 'missing';
  }
}

/**
 * A cheap live view of one home's config for hot paths (every browser tool call checks a flag):
 * one `stat` per read, a full parse only when the file changed. Edits take effect without a
 * restart. Errors (invalid YAML) are thrown on every read until the file is fixed.
 */
export function createConfigReader(
  options: { home?: string; env?: NodeJS.ProcessEnv } = {},
): ConfigReader {
  const home = options.home ?? getHermesHome();
  const file = getConfigPath(home);
  let cached: { key: string; value: LoadedConfig } | undefined;
  return {
    read() {
      const key = fingerprint(file);
      if (cached && cached.key === key) return cached.value;
      const value = loadConfig(options.env ? { home, env: options.env } : { home });
      cached = { key, value };
      return value;
    },
  };
}
