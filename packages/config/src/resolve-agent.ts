import * as v from 'valibot';
import type {
  AgentConfig,
  ApprovalMode,
  ApprovalsConfig,
  CompressionConfig,
  TerminalConfig,
} from './agent-config-types.js';
import {
  AGENT_API_MAX_RETRIES_RANGE,
  AGENT_API_TIMEOUT_RANGE,
  AGENT_MAX_TURNS_RANGE,
  APPROVAL_MODES,
  APPROVAL_TIMEOUT_RANGE,
  COMPRESSION_PROTECT_LAST_N_RANGE,
  COMPRESSION_THRESHOLD_RANGE,
  DEFAULT_AGENT_API_MAX_RETRIES,
  DEFAULT_AGENT_API_TIMEOUT_S,
  DEFAULT_AGENT_MAX_TURNS,
  DEFAULT_APPROVAL_MODE,
  DEFAULT_APPROVAL_TIMEOUT_S,
  DEFAULT_COMPRESSION_ENABLED,
  DEFAULT_COMPRESSION_PROTECT_LAST_N,
  DEFAULT_COMPRESSION_THRESHOLD,
  DEFAULT_TERMINAL_MAX_OUTPUT_CHARS,
  DEFAULT_TERMINAL_TIMEOUT_S,
  DEFAULT_TOOLSETS,
  TERMINAL_MAX_OUTPUT_CHARS_RANGE,
  TERMINAL_TIMEOUT_RANGE,
} from './agent-defaults.js';
import { textSchema } from './config-schema.js';
import { booleanKnob, integerKnob, numberKnob, type Warn } from './knobs.js';
import { parseLenient, text } from './lenient-section.js';

// The tool loop (`agent`), `compression`, `toolsets`, `terminal` and `approvals`.

const optionalText = v.nullish(textSchema);
const optionalKnob = v.nullish(v.unknown());
const stringList = v.array(textSchema);

const agentSchema = v.looseObject({
  max_turns: optionalKnob,
  reasoning_effort: v.nullish(v.union([textSchema, v.boolean()])),
  disabled_toolsets: v.nullish(stringList),
  stream: optionalKnob,
  api_max_retries: optionalKnob,
  api_timeout: optionalKnob,
});

const compressionSchema = v.looseObject({
  enabled: optionalKnob,
  threshold: optionalKnob,
  protect_last_n: optionalKnob,
});

const terminalSchema = v.looseObject({
  timeout: optionalKnob,
  max_output_chars: optionalKnob,
  cwd: optionalText,
});

const approvalsSchema = v.looseObject({
  mode: optionalKnob,
  timeout: optionalKnob,
});

export function resolveAgent(value: unknown, warn: Warn): AgentConfig {
  const section = parseLenient(agentSchema, value, 'agent', warn);
  const reasoning = section.reasoning_effort;
  return {
    maxTurns: integerKnob(section.max_turns, DEFAULT_AGENT_MAX_TURNS, {
      key: 'agent.max_turns',
      range: AGENT_MAX_TURNS_RANGE,
      warn,
    }),
    reasoningEffort: reasoning === false ? 'none' : typeof reasoning === 'string' ? reasoning : '',
    disabledToolsets: (section.disabled_toolsets ?? []).filter((name) => name !== ''),
    stream: booleanKnob(section.stream, true, { key: 'agent.stream', warn }),
    apiMaxRetries: integerKnob(section.api_max_retries, DEFAULT_AGENT_API_MAX_RETRIES, {
      key: 'agent.api_max_retries',
      range: AGENT_API_MAX_RETRIES_RANGE,
      warn,
    }),
    apiTimeoutS: numberKnob(section.api_timeout, DEFAULT_AGENT_API_TIMEOUT_S, {
      key: 'agent.api_timeout',
      range: AGENT_API_TIMEOUT_RANGE,
      warn,
    }),
  };
}

export function resolveCompression(value: unknown, warn: Warn): CompressionConfig {
  const section = parseLenient(compressionSchema, value, 'compression', warn);
  return {
    enabled: booleanKnob(section.enabled, DEFAULT_COMPRESSION_ENABLED, {
      key: 'compression.enabled',
      warn,
    }),
    threshold: numberKnob(section.threshold, DEFAULT_COMPRESSION_THRESHOLD, {
      key: 'compression.threshold',
      range: COMPRESSION_THRESHOLD_RANGE,
      warn,
    }),
    protectLastN: integerKnob(section.protect_last_n, DEFAULT_COMPRESSION_PROTECT_LAST_N, {
      key: 'compression.protect_last_n',
      range: COMPRESSION_PROTECT_LAST_N_RANGE,
      warn,
    }),
  };
}

/** `toolsets`: a list of toolset names; anything else keeps the default `["hermes-cli"]`. */
export function resolveToolsets(value: unknown, warn: Warn): string[] {
  if (value === null || value === undefined) return [...DEFAULT_TOOLSETS];
  if (!Array.isArray(value)) {
    warn(`toolsets must be a list; using the default ${JSON.stringify(DEFAULT_TOOLSETS)}`);
    return [...DEFAULT_TOOLSETS];
  }
  return value
    .filter((entry) => entry !== null && entry !== undefined)
    .map((entry) => String(entry).trim())
    .filter((entry) => entry !== '');
}

export function resolveTerminal(value: unknown, warn: Warn): TerminalConfig {
  const section = parseLenient(terminalSchema, value, 'terminal', warn);
  return {
    timeoutS: numberKnob(section.timeout, DEFAULT_TERMINAL_TIMEOUT_S, {
      key: 'terminal.timeout',
      range: TERMINAL_TIMEOUT_RANGE,
      warn,
    }),
    maxOutputChars: integerKnob(section.max_output_chars, DEFAULT_TERMINAL_MAX_OUTPUT_CHARS, {
      key: 'terminal.max_output_chars',
      range: TERMINAL_MAX_OUTPUT_CHARS_RANGE,
      warn,
    }),
    cwd: text(section.cwd),
  };
}

export function resolveApprovals(value: unknown, warn: Warn): ApprovalsConfig {
  const section = parseLenient(approvalsSchema, value, 'approvals', warn);
  let mode: ApprovalMode = DEFAULT_APPROVAL_MODE;
  // YAML reads a bare `off` as false; accept it as the mode it was meant to be.
  const raw = section.mode === false ? 'off' : section.mode;
  if (typeof raw === 'string' && (APPROVAL_MODES as readonly string[]).includes(raw.trim()))
    mode = raw.trim() as ApprovalMode;
  else if (raw !== null && raw !== undefined)
    warn(`approvals.mode must be one of ${APPROVAL_MODES.join(', ')}; using the default ${mode}`);
  return {
    mode,
    timeoutS: numberKnob(section.timeout, DEFAULT_APPROVAL_TIMEOUT_S, {
      key: 'approvals.timeout',
      range: APPROVAL_TIMEOUT_RANGE,
      warn,
    }),
  };
}
