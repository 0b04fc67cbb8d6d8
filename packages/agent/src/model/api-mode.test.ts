import { describe, expect, it } from 'vitest';
import { detectApiMode, normalizeApiMode } from './api-mode.js';

describe('detectApiMode', () => {
  it.each([
    ['https://api.x.ai/v1', 'codex_responses'],
    ['https://api.meta.ai/v1', 'codex_responses'],
    ['https://api.router.com/v1', 'codex_responses'],
    ['https://api.openai.com/v1', 'codex_responses'],
    ['https://API.OpenAI.com/v1', 'codex_responses'],
    ['https://api.openai.com./v1', 'codex_responses'],
    ['https://api.anthropic.com/v1', 'anthropic_messages'],
    ['https://proxy.example.com/anthropic', 'anthropic_messages'],
    ['https://proxy.example.com/anthropic/', 'anthropic_messages'],
    ['https://api.kimi.com/coding', 'anthropic_messages'],
    ['https://api.kimi.com/coding/v1', 'anthropic_messages'],
    ['https://openrouter.ai/api/v1', 'chat_completions'],
    ['http://127.0.0.1:11434/v1', 'chat_completions'],
  ])('%s → %s', (url, mode) => {
    expect(detectApiMode(url)).toBe(mode);
  });

  it.each([
    'https://api.openai.com.evil.test/v1',
    'https://evil-api.openai.com/v1',
    'https://notapi.x.ai/v1',
    'https://api.x.ai.attacker.io/v1',
    'https://api-openai.com/v1',
    'https://xapi.x.ai/v1',
    'https://api.anthropic.com.evil.test/v1',
    'https://evil.test/api.openai.com/v1',
    'https://evil.test/v1?host=api.openai.com',
    'https://api.openai.com@evil.test/v1',
    'https://api.kimi.com/codingx',
    'https://other.kimi.com/coding',
    'https://proxy.example.com/anthropic-compat',
    'not a url',
  ])('refuses the lookalike %s (chat_completions)', (url) => {
    expect(detectApiMode(url)).toBe('chat_completions');
  });
});

describe('normalizeApiMode', () => {
  it.each([
    ['chat_completions', 'chat_completions'],
    ['chat', 'chat_completions'],
    ['Chat-Completions', 'chat_completions'],
    ['responses', 'codex_responses'],
    ['codex', 'codex_responses'],
    ['messages', 'anthropic_messages'],
    ['anthropic', 'anthropic_messages'],
    ['bedrock', 'bedrock_converse'],
  ])('%s → %s', (alias, mode) => {
    expect(normalizeApiMode(alias)).toBe(mode);
  });

  it('answers undefined for an unknown mode or an empty value', () => {
    expect(normalizeApiMode('carrier-pigeon')).toBeUndefined();
    expect(normalizeApiMode('  ')).toBeUndefined();
  });
});
