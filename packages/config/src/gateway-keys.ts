import { coerceBoolean, parseBooleanToken } from './coerce.js';

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * The one rule for gateway knobs that may be written at the top level of config.yaml or nested
 * under `gateway:`: the top-level key wins by presence — even when its value is falsy — and only
 * an absent top-level key falls back to `gateway.<key>`. Returns `undefined` when neither is set.
 */
export function readGatewayKey(raw: Record<string, unknown>, key: string): unknown {
  if (Object.hasOwn(raw, key)) return raw[key];
  const nested = asRecord(raw.gateway);
  if (nested && Object.hasOwn(nested, key)) return nested[key];
  return undefined;
}

export interface EnvBooleanOverride {
  /** The override's value, or `undefined` when the variable is unset, blank or unrecognised. */
  readonly value: boolean | undefined;
  /** Set when the variable holds something that is not a boolean token. */
  readonly warning?: string;
}

/** Reads a boolean environment override such as `GATEWAY_MULTIPLEX_PROFILES`. */
export function readEnvBoolean(env: NodeJS.ProcessEnv, name: string): EnvBooleanOverride {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return { value: undefined };
  const parsed = parseBooleanToken(raw);
  if (parsed === undefined) {
    return {
      value: undefined,
      warning: `${name}=${JSON.stringify(raw)} is not a boolean (use true/false, 1/0, yes/no, on/off); ignored`,
    };
  }
  return { value: parsed };
}

/** `coerceBoolean` over `readGatewayKey`. */
export function readGatewayBoolean(
  raw: Record<string, unknown>,
  key: string,
  defaultValue: boolean,
): boolean {
  return coerceBoolean(readGatewayKey(raw, key), defaultValue);
}
