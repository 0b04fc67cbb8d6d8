import {
  BROWSER_CONTROL_ARTIFACT_CAPABILITIES,
  BROWSER_CONTROL_CAPABILITIES,
  BROWSER_CONTROL_DEVELOPER_CAPABILITIES,
  BROWSER_CONTROL_PROTOCOL_VERSION,
} from './constants.js';

const permitted = new Set([
  ...BROWSER_CONTROL_CAPABILITIES,
  ...BROWSER_CONTROL_ARTIFACT_CAPABILITIES,
]);
const developer = new Set(BROWSER_CONTROL_DEVELOPER_CAPABILITIES);
const artifact = new Set(BROWSER_CONTROL_ARTIFACT_CAPABILITIES);

/**
 * True only for the number 1. Booleans and strings are refused; a JSON `1.0` parses to the number
 * 1 and cannot be told apart from `1`, so it is accepted.
 */
export function browserControlProtocolSupported(value: unknown): boolean {
  return typeof value === 'number' && value === BROWSER_CONTROL_PROTOCOL_VERSION;
}

export function isDeveloperCapability(name: string): boolean {
  return developer.has(name);
}

export function isArtifactCapability(name: string): boolean {
  return artifact.has(name);
}

/**
 * Keeps the string entries of `value` that are in the base or artifact list, plus developer
 * entries only when `developerMode` is literally true. A non-array gives the empty set; unknown
 * names are dropped silently. Callers treat an empty result as a failed registration.
 */
export function filterBrowserControlCapabilities(
  value: unknown,
  developerMode: boolean,
): Set<string> {
  const result = new Set<string>();
  if (!Array.isArray(value)) return result;
  for (const entry of value) {
    if (typeof entry !== 'string') continue;
    if (permitted.has(entry) || (developerMode === true && developer.has(entry))) {
      result.add(entry);
    }
  }
  return result;
}
