import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_AGENT_MAX_TURNS,
  DEFAULT_COMPRESSION_PROTECT_LAST_N,
  DEFAULT_COMPRESSION_THRESHOLD,
  DEFAULT_TERMINAL_MAX_OUTPUT_CHARS,
  DEFAULT_TERMINAL_TIMEOUT_S,
} from './agent-defaults.js';
import { loadConfig } from './load-config.js';

async function load(yaml: string | undefined) {
  const home = (await tempHome()).path;
  if (yaml !== undefined) writeFileSync(path.join(home, 'config.yaml'), yaml);
  return loadConfig({ home, env: {} });
}

describe('agent sections', () => {
  it('gives the shipped defaults when nothing is configured', async () => {
    const { config, warnings } = await load(undefined);
    expect(warnings).toEqual([]);
    expect(config.agent).toEqual({
      maxTurns: DEFAULT_AGENT_MAX_TURNS,
      reasoningEffort: '',
      disabledToolsets: [],
      stream: true,
      apiMaxRetries: 2,
      apiTimeoutS: 600,
    });
    expect(config.compression).toEqual({
      enabled: true,
      threshold: DEFAULT_COMPRESSION_THRESHOLD,
      protectLastN: DEFAULT_COMPRESSION_PROTECT_LAST_N,
    });
    expect(config.toolsets).toEqual(['hermes-cli']);
    expect(config.terminal).toEqual({
      timeoutS: DEFAULT_TERMINAL_TIMEOUT_S,
      maxOutputChars: DEFAULT_TERMINAL_MAX_OUTPUT_CHARS,
      cwd: '',
    });
    expect(config.approvals).toEqual({ mode: 'manual', timeoutS: 60 });
    expect(config.model.contextLength).toBeUndefined();
  });

  it('reads configured values, including a bare YAML off for approvals.mode', async () => {
    const { config, warnings } = await load(
      [
        'model: { default: m, context_length: 32000, max_tokens: 2048 }',
        'agent: { max_turns: 12, reasoning_effort: false, disabled_toolsets: [terminal], stream: no }',
        'compression: { enabled: off, threshold: 0.7, protect_last_n: 6 }',
        'toolsets: [file, todo]',
        'terminal: { timeout: 30, max_output_chars: 4000, cwd: /srv/work }',
        'approvals: { mode: off, timeout: 5 }',
      ].join('\n'),
    );
    expect(warnings).toEqual([]);
    expect(config.model).toMatchObject({ model: 'm', contextLength: 32000, maxTokens: 2048 });
    expect(config.agent).toMatchObject({
      maxTurns: 12,
      reasoningEffort: 'none',
      disabledToolsets: ['terminal'],
      stream: false,
    });
    expect(config.compression).toEqual({ enabled: false, threshold: 0.7, protectLastN: 6 });
    expect(config.toolsets).toEqual(['file', 'todo']);
    expect(config.terminal).toEqual({ timeoutS: 30, maxOutputChars: 4000, cwd: '/srv/work' });
    expect(config.approvals).toEqual({ mode: 'off', timeoutS: 5 });
  });

  it('falls back to defaults with a warning naming each bad key', async () => {
    const { config, warnings } = await load(
      [
        'agent: { max_turns: 0 }',
        'compression: { threshold: 2 }',
        'toolsets: hermes-cli',
        'terminal: { timeout: .inf }',
        'approvals: { mode: yolo }',
        'model: { default: m, context_length: -5 }',
      ].join('\n'),
    );
    expect(config.agent.maxTurns).toBe(DEFAULT_AGENT_MAX_TURNS);
    expect(config.compression.threshold).toBe(DEFAULT_COMPRESSION_THRESHOLD);
    expect(config.toolsets).toEqual(['hermes-cli']);
    expect(config.terminal.timeoutS).toBe(DEFAULT_TERMINAL_TIMEOUT_S);
    expect(config.approvals.mode).toBe('manual');
    expect(config.model.contextLength).toBeUndefined();
    const text = warnings.join('\n');
    for (const key of [
      'agent.max_turns',
      'compression.threshold',
      'toolsets must be a list',
      'terminal.timeout',
      'approvals.mode',
      'model.context_length',
    ])
      expect(text).toContain(key);
  });
});
