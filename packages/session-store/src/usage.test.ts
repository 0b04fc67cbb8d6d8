import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import { runFixture } from '../test/processes.js';
import { openSessionStore, systemPromptHash } from './index.js';

function storedPromptCount(databasePath: string): number {
  const probe = new BetterSqlite3(databasePath, { readonly: true });
  try {
    return probe.prepare('SELECT count(*) FROM system_prompts').pluck().get() as number;
  } finally {
    probe.close();
  }
}

describe('usage and model metadata', () => {
  it('adds usage to the counters and keeps the latest model and billing route', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli', model: 'old-model' });
    await store.recordUsage('s', {
      inputTokens: 100,
      outputTokens: 20,
      cacheReadTokens: 50,
      cacheWriteTokens: 5,
      reasoningTokens: 7,
      apiCalls: 1,
      toolCalls: 2,
      estimatedCostUsd: 0.0125,
      model: 'gpt-test',
      billingProvider: 'openrouter',
      billingBaseUrl: 'https://example.test/v1',
      toolNames: ['web_search', 'terminal'],
    });
    const row = await store.recordUsage('s', {
      inputTokens: 1,
      apiCalls: 1,
      estimatedCostUsd: 0.0025,
      toolNames: ['terminal', 'browser'],
    });
    expect(row).toMatchObject({
      inputTokens: 101,
      outputTokens: 20,
      cacheReadTokens: 50,
      cacheWriteTokens: 5,
      reasoningTokens: 7,
      apiCallCount: 2,
      toolCallCount: 2,
      model: 'gpt-test',
      billingProvider: 'openrouter',
      billingBaseUrl: 'https://example.test/v1',
    });
    expect(row.estimatedCostUsd).toBeCloseTo(0.015, 10);
    expect(JSON.parse(row.toolNames ?? 'null')).toEqual(['browser', 'terminal', 'web_search']);
    expect(store.requireSession('s')).toEqual(row);
    // An empty name means "not known" and keeps what is stored.
    const kept = await store.recordUsage('s', { model: '', billingProvider: '', apiCalls: 1 });
    expect(kept).toMatchObject({
      model: 'gpt-test',
      billingProvider: 'openrouter',
      apiCallCount: 3,
    });
  });

  it('refuses invalid usage and changes nothing', async () => {
    const { store } = await openTestStore();
    await store.createSession({ id: 's', source: 'cli' });
    const invalid: Record<string, unknown>[] = [
      { inputTokens: -1 },
      { outputTokens: 1.5 },
      { apiCalls: Number.NaN },
      { reasoningTokens: '3' },
      { estimatedCostUsd: -0.1 },
      { estimatedCostUsd: Number.POSITIVE_INFINITY },
      { toolNames: 'terminal' },
      { toolNames: [''] },
      { inputToken: 3 }, // a typo must not be dropped silently
    ];
    for (const usage of invalid) {
      await expect(
        store.recordUsage('s', usage as never),
        JSON.stringify(usage),
      ).rejects.toMatchObject({ code: 'invalid_argument' });
    }
    expect(store.requireSession('s')).toMatchObject({
      inputTokens: 0,
      outputTokens: 0,
      apiCallCount: 0,
      estimatedCostUsd: 0,
      toolNames: null,
    });
    await expect(store.recordUsage('missing', { inputTokens: 1 })).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });

  it('loses no increment when two processes record usage at once', async () => {
    const home = await tempHome();
    const databasePath = path.join(home.path, 'state.db');
    const store = await openSessionStore({ path: databasePath });
    try {
      await store.createSession({ id: 'shared', source: 'cli' });
      const perWriter = 150;
      const writers = await Promise.all([
        runFixture('store-ops.ts', [databasePath, 'record-usage', 'shared', String(perWriter)]),
        runFixture('store-ops.ts', [databasePath, 'record-usage', 'shared', String(perWriter)]),
      ]);
      const exits = await Promise.all(writers.map((writer) => writer.exited));
      expect(
        exits.map((exit) => exit.code),
        writers.map((writer) => writer.stderr()).join('\n'),
      ).toEqual([0, 0]);
      const row = store.requireSession('shared');
      expect(row).toMatchObject({
        inputTokens: 3 * 2 * perWriter,
        outputTokens: 2 * 2 * perWriter,
        apiCallCount: 2 * perWriter,
        estimatedCostUsd: 0.25 * 2 * perWriter,
      });
      expect(JSON.parse(row.toolNames ?? '[]')).toEqual(
        ['shared', ...writers.map((writer) => `tool-${writer.pid}`)].sort(),
      );
    } finally {
      await store.close();
    }
  }, 60_000);

  it('stores each distinct system prompt once and forgets prompts no session uses', async () => {
    const { store, databasePath } = await openTestStore();
    await store.createSession({ id: 'a', source: 'cli' });
    await store.createSession({ id: 'b', source: 'cli' });
    expect(store.getSessionSystemPrompt('a')).toBeNull();
    await store.setSessionSystemPrompt('a', 'You are Hermes.');
    await store.setSessionSystemPrompt('b', 'You are Hermes.');
    expect(store.getSessionSystemPrompt('b')).toBe('You are Hermes.');
    expect(store.requireSession('a').systemPromptHash).toBe(systemPromptHash('You are Hermes.'));
    expect(storedPromptCount(databasePath)).toBe(1);
    await store.setSessionSystemPrompt('a', 'You are terse.');
    expect(storedPromptCount(databasePath)).toBe(2);
    await store.deleteSession('b');
    expect(storedPromptCount(databasePath)).toBe(1); // "You are Hermes." is no longer used
    // The compression child continues the conversation with the same prompt.
    const child = await store.publishCompressionChild({ parentId: 'a', summary: 'so far' });
    expect(store.getSessionSystemPrompt(child)).toBe('You are terse.');
    await store.setSessionSystemPrompt('a', null);
    expect(store.getSessionSystemPrompt('a')).toBeNull();
    expect(storedPromptCount(databasePath)).toBe(1); // still used by the child
    await expect(store.setSessionSystemPrompt('missing', 'x')).rejects.toMatchObject({
      code: 'session_not_found',
    });
    expect(() => store.getSessionSystemPrompt('missing')).toThrow(
      expect.objectContaining({ code: 'session_not_found' }),
    );
  });

  it('updates the model, cwd and model config, leaving absent fields alone', async () => {
    const { store } = await openTestStore();
    await store.createSession({
      id: 's',
      source: 'cli',
      model: 'm1',
      cwd: '/work',
      modelConfig: { temperature: 1 },
    });
    expect(await store.updateSession('s', { model: 'm2' })).toMatchObject({
      model: 'm2',
      cwd: '/work',
      modelConfig: '{"temperature":1}',
    });
    expect(
      await store.updateSession('s', { cwd: null, modelConfig: { reasoning: 'high' } }),
    ).toMatchObject({ model: 'm2', cwd: null, modelConfig: '{"reasoning":"high"}' });
    await expect(store.updateSession('s', { model: 3 } as never)).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await expect(store.updateSession('s', { title: 'x' } as never)).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await expect(store.updateSession('missing', { model: 'm' })).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });
});
