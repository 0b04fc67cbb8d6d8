import { describe, expect, it } from 'vitest';
import { buildReviewGoal, buildReviewTask } from './build-review-task.js';
import {
  CONVERSATION_FOOTER,
  CONVERSATION_HEADER,
  GIT_SECTION_FOOTER,
  GIT_SECTION_HEADER,
  INSTRUCTIONS_HEADER,
  REVIEW_CLOSING_NOTE,
  REVIEW_GOAL,
  REVIEW_ORIGIN_NOTE,
} from './constants.js';
import type { GitChanges } from './git/collect-git-changes.js';
import type { SnapshotEntry } from './snapshot-recent-messages.js';

const snapshot: SnapshotEntry[] = [
  { role: 'user', text: 'Please add rate limiting to the upload route.' },
  { role: 'assistant', text: 'Done: see src/upload.ts, a token bucket of 10/s.' },
];

const longPrompt = `focus on security ${'and the token bucket refill maths '.repeat(6)}\nthen\n\nthe tests`;

describe('buildReviewGoal', () => {
  it('is Review: plus the whitespace-collapsed focus, or Review recent work', () => {
    expect(buildReviewGoal('  check\n\tthe   tests ')).toBe('Review: check the tests');
    expect(buildReviewGoal('')).toBe('Review recent work');
    expect(buildReviewGoal(' \n ')).toBe('Review recent work');
  });

  it('cuts a long focus to 80 characters ending in …, on one line', () => {
    const goal = buildReviewGoal(longPrompt);
    expect(goal.startsWith('Review: focus on security ')).toBe(true);
    expect(goal.length).toBeLessThanOrEqual(80);
    expect(goal).not.toContain('\n');
    expect(goal.endsWith('…')).toBe(true);
    // Right-trimmed before the ellipsis: never "word …".
    expect(buildReviewGoal(`${'a'.repeat(70)}        bbbb`)).toBe(`Review: ${'a'.repeat(70)}…`);
    expect(buildReviewGoal('x'.repeat(72))).toBe(`Review: ${'x'.repeat(72)}`);
    expect(buildReviewGoal('x'.repeat(73))).toBe(`Review: ${'x'.repeat(71)}…`);
  });
});

describe('buildReviewTask', () => {
  it('briefs the reviewer with the standing instructions, the excerpt and the full prompt', () => {
    const { goal, context } = buildReviewTask(snapshot, longPrompt);
    expect(goal.startsWith('Review: focus on security ')).toBe(true);
    for (const part of [
      REVIEW_GOAL,
      '[USER]',
      '[PRIMARY AGENT]',
      snapshot[0]?.text,
      snapshot[1]?.text,
      longPrompt.trim(),
    ])
      expect(context).toContain(part);
  });

  it('puts the sections in the reference order', () => {
    const { context } = buildReviewTask(snapshot, 'be strict\nabout errors', ['a', 'b']);
    expect(context).toBe(
      [
        REVIEW_GOAL,
        '',
        REVIEW_ORIGIN_NOTE,
        '',
        CONVERSATION_HEADER,
        '[USER]',
        snapshot[0]?.text,
        '',
        '[PRIMARY AGENT]',
        snapshot[1]?.text,
        '',
        CONVERSATION_FOOTER,
        '',
        'The primary agent was operating under these loaded skills: a, b. Before reviewing, load each with skill_view(name=...) and treat their conventions, invariants, and review standards as binding — the work was produced under them.',
        '',
        INSTRUCTIONS_HEADER,
        'be strict\nabout errors',
        '',
        REVIEW_CLOSING_NOTE,
      ].join('\n'),
    );
  });

  it('asks for a general review, without skills or instructions, when given only the excerpt', () => {
    const { goal, context } = buildReviewTask(snapshot);
    expect(goal).toBe('Review recent work');
    expect(context).not.toContain('loaded skills');
    expect(context).not.toContain(INSTRUCTIONS_HEADER);
    expect(context.endsWith(`${CONVERSATION_FOOTER}\n\n${REVIEW_CLOSING_NOTE}`)).toBe(true);
  });

  it('leaves out the skills and instructions paragraphs when there are none', () => {
    const { context } = buildReviewTask(snapshot, '   ', []);
    expect(context).not.toContain('loaded skills');
    expect(context).not.toContain('skill_view');
    expect(context).not.toContain(INSTRUCTIONS_HEADER);
    expect(context.endsWith(`${CONVERSATION_FOOTER}\n\n${REVIEW_CLOSING_NOTE}`)).toBe(true);
  });

  it('adds a bounded git section after the excerpt and labels the goal with the target', () => {
    const git: GitChanges = {
      target: { kind: 'commit', sha: 'abc1234' },
      repository: '/work/repo',
      label: 'commit abc1234def56',
      description: 'commit abc1234def56 in /work/repo',
      inspectCommand: 'git show abc1234def56',
      stat: ' a.ts | 2 +-',
      patch: 'diff --git a/a.ts b/a.ts\n',
      truncated: true,
      maxChars: 100_000,
    };
    const { goal, context } = buildReviewTask([], 'look at locking', [], { git });
    expect(goal).toBe('Review commit abc1234def56: look at locking');
    expect(context).toContain(
      [
        '--- Git changes to review ---',
        'Target: commit abc1234def56 in /work/repo.',
        '',
        ' a.ts | 2 +-',
        '',
        'diff --git a/a.ts b/a.ts',
        '[... git output truncated at 100000 characters; see all of it with: git show abc1234def56 (in /work/repo) ...]',
        '--- End of git changes ---',
        '',
        INSTRUCTIONS_HEADER,
      ].join('\n'),
    );
    expect(context).toContain(
      `${CONVERSATION_HEADER}\n(no messages yet — review the git changes below)\n`,
    );
    expect(buildReviewTask(snapshot, '', [], { git }).goal).toBe('Review commit abc1234def56');
  });

  it('lays out a git-only briefing line by line: patch and cut note only when there are some', () => {
    const git: GitChanges = {
      target: { kind: 'uncommitted' },
      repository: '/work/repo',
      label: 'uncommitted changes',
      description: 'uncommitted changes against HEAD in /work/repo',
      inspectCommand: 'git diff HEAD',
      stat: ' a.ts | 2 +-',
      patch: '',
      truncated: false,
      maxChars: 100_000,
    };
    const head = [
      REVIEW_GOAL,
      '',
      REVIEW_ORIGIN_NOTE,
      '',
      CONVERSATION_HEADER,
      '(no messages yet — review the git changes below)',
      '',
      CONVERSATION_FOOTER,
      '',
      GIT_SECTION_HEADER,
      'Target: uncommitted changes against HEAD in /work/repo.',
      '',
      ' a.ts | 2 +-',
    ];
    const tail = [GIT_SECTION_FOOTER, '', REVIEW_CLOSING_NOTE];
    const withPatch = { ...git, patch: 'diff --git a/a.ts b/a.ts\n' };
    expect(buildReviewTask([], '', [], { git: withPatch }).context).toBe(
      [...head, '', 'diff --git a/a.ts b/a.ts', ...tail].join('\n'),
    );
    expect(buildReviewTask([], '', [], { git }).context).toBe([...head, ...tail].join('\n'));
    // The budget went on the stat alone: no patch, and the cut is disclosed.
    expect(buildReviewTask([], '', [], { git: { ...git, truncated: true } }).context).toBe(
      [
        ...head,
        '[... git output truncated at 100000 characters; see all of it with: git diff HEAD (in /work/repo) ...]',
        ...tail,
      ].join('\n'),
    );
  });
});
