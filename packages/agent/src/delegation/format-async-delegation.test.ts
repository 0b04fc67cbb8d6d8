import { describe, expect, it } from 'vitest';
import { type ChildResult, placeholderResult } from './child-result.js';
import type { AsyncDelegationEvent } from './completion-event.js';
import {
  COMPLETION_EXPLANATION,
  deriveResultOutcome,
  formatAsyncDelegation,
} from './format-async-delegation.js';

function entry(overrides: Partial<ChildResult>): ChildResult {
  return {
    ...placeholderResult({
      taskIndex: 0,
      subagentId: 'sa-0-abcd1234',
      goal: 'Review: focus on security',
      model: 'test-model',
      status: 'completed',
      error: '',
    }),
    error: undefined as never,
    exit_reason: 'completed',
    ...overrides,
  } as ChildResult;
}

function event(overrides: Partial<AsyncDelegationEvent>): AsyncDelegationEvent {
  const dispatched = new Date(2026, 0, 2, 3, 4, 5).getTime() / 1000;
  return {
    type: 'async_delegation',
    delegation_id: 'deleg_1234abcd',
    session_key: 's',
    origin_ui_session_id: null,
    origin_session_id: 's',
    parent_session_id: 's',
    goal: 'Review: focus on security',
    goals: ['Review: focus on security'],
    context: 'the briefing',
    toolsets: ['file', 'terminal'],
    role: 'leaf',
    model: 'test-model',
    status: 'completed',
    dispatched_at: dispatched,
    completed_at: dispatched + 95,
    is_batch: true,
    results: [],
    error: null,
    total_duration_seconds: 95.2,
    ...overrides,
  };
}

describe('formatAsyncDelegation', () => {
  it('renders the batch form: header, explanation, what was dispatched, one block per task', () => {
    const text = formatAsyncDelegation(
      event({
        results: [
          entry({ summary: 'REVIEW: looks good', api_calls: 4, duration_seconds: 90.4 }),
          entry({
            task_index: 1,
            goal: 'Check the tests',
            status: 'failed',
            summary: null,
            error: 'provider refused',
          }),
        ],
        goals: ['Review: focus on security', 'Check the tests'],
      }),
      { now: new Date(2026, 0, 2, 3, 9, 5).getTime() / 1000 },
    );
    expect(text.split('\n')).toEqual([
      '[ASYNC DELEGATION BATCH COMPLETE — deleg_1234abcd]',
      ...COMPLETION_EXPLANATION.split('\n'),
      'Dispatched: 2026-01-02 03:04:05 (5m 0s ago)',
      'Context you provided: the briefing',
      'Toolsets: file, terminal',
      'Role: leaf  Model: test-model',
      'Total duration: 95.2s',
      '',
      '--- ✓ TASK 1/2: Review: focus on security  (outcome=unverified, status=completed, api_calls=4, 90s) ---',
      'REVIEW: looks good',
      '',
      '--- ✗ TASK 2/2: Check the tests  (outcome=failed, status=failed, api_calls=0, 0s) ---',
      '(no summary)',
      '[FAILED — provider refused]',
    ]);
  });

  it('renders the single form with --- RESULT --- and discloses truncation', () => {
    const text = formatAsyncDelegation(
      event({
        is_batch: false,
        results: [
          entry({ summary: 'partial notes', truncated: true, exit_reason: 'max_iterations' }),
        ],
      }),
    );
    expect(text.startsWith('[ASYNC DELEGATION COMPLETE — deleg_1234abcd]\n')).toBe(true);
    expect(text).toContain('Original goal: Review: focus on security');
    expect(text).toContain('Outcome: partial  Status: completed');
    expect(text).toContain('[TRUNCATED at the iteration limit]');
    expect(text).toContain('--- RESULT ---\npartial notes\n[PARTIAL');
  });

  it('caps a long summary with a footer instead of flooding the conversation', () => {
    const text = formatAsyncDelegation(
      event({ results: [entry({ summary: 'y'.repeat(50_000) })] }),
      { maxSummaryChars: 2000 },
    );
    expect(text).toContain('[SUMMARY TRUNCATED — 2000 of 50000 characters shown]');
    expect(text.length).toBeLessThan(3000);
  });

  it('derives outcomes from status, output and truncation', () => {
    expect(deriveResultOutcome({ status: 'completed', summary: 'x', truncated: false })).toBe(
      'unverified',
    );
    expect(deriveResultOutcome({ status: 'completed', summary: 'x', truncated: true })).toBe(
      'partial',
    );
    expect(deriveResultOutcome({ status: 'interrupted', summary: 'x', truncated: false })).toBe(
      'partial',
    );
    expect(deriveResultOutcome({ status: 'interrupted', summary: null, truncated: false })).toBe(
      'interrupted',
    );
    expect(deriveResultOutcome({ status: 'timeout', summary: null, truncated: false })).toBe(
      'timed_out',
    );
    expect(deriveResultOutcome({ status: 'stalled', summary: null, truncated: false })).toBe(
      'stalled',
    );
    expect(deriveResultOutcome({ status: 'unknown', summary: null, truncated: false })).toBe(
      'unknown',
    );
    expect(deriveResultOutcome({ status: 'error', summary: null, truncated: false })).toBe(
      'failed',
    );
  });
});
