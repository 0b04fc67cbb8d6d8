import os from 'node:os';

/** Host load figures for log lines; `unknown` when the platform cannot say. */
export function readHostLoad(): { load1: string; cpuCount: string } {
  let load1 = 'unknown';
  let cpuCount = 'unknown';
  try {
    const value = os.loadavg()[0];
    if (value !== undefined && Number.isFinite(value) && process.platform !== 'win32') {
      load1 = value.toFixed(2);
    }
  } catch {
    // keep unknown
  }
  try {
    const count = os.availableParallelism();
    if (count > 0) cpuCount = String(count);
  } catch {
    // keep unknown
  }
  return { load1, cpuCount };
}
