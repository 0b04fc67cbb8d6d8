import { afterEach, describe, expect, it } from 'vitest';
import { type TempRepository, tempRepository } from '../test/git-repository.js';
import { GIT_SECTION_FOOTER, GIT_SECTION_HEADER, INSTRUCTIONS_HEADER } from './constants.js';
import type { DelegationRail, DelegationRequest } from './delegation-rail.js';
import { ReviewRefusal } from './review-refusal.js';
import { startReview } from './start-review.js';

const repositories: TempRepository[] = [];
afterEach(() => {
  for (const repo of repositories.splice(0)) repo.remove();
});
function repository(): TempRepository {
  const repo = tempRepository();
  repositories.push(repo);
  repo.commit('initial', { 'src/limits.ts': 'export const MAX = 10;\n' });
  return repo;
}
function recordingRail() {
  const requests: DelegationRequest[] = [];
  const rail: DelegationRail = {
    async dispatch(request) {
      requests.push(request);
      return { delegationId: 'deleg_git', mode: 'background' };
    },
  };
  return { rail, requests };
}

describe('startReview with a git target', () => {
  it('reviews uncommitted changes in the session folder even before anyone has chatted', async () => {
    const repo = repository();
    repo.write('src/limits.ts', 'export const MAX = 1000;\n');
    const { rail, requests } = recordingRail();
    const review = await startReview({
      messages: [],
      instructions: 'uncommitted is 1000 safe?',
      rail,
      cwd: repo.path,
    });
    expect(review).toMatchObject({
      status: 'dispatched',
      goal: 'Review uncommitted changes: is 1000 safe?',
      target: { kind: 'uncommitted' },
      instructions: 'is 1000 safe?',
    });
    const context = requests[0]?.context ?? '';
    expect(context).toContain(GIT_SECTION_HEADER);
    expect(context).toContain('+export const MAX = 1000;');
    expect(context.indexOf(GIT_SECTION_FOOTER)).toBeLessThan(context.indexOf(INSTRUCTIONS_HEADER));
    expect(context).toContain(`${INSTRUCTIONS_HEADER}\nis 1000 safe?`);
  });

  it('refuses a clean diff without dispatching anything', async () => {
    const repo = repository();
    const { rail, requests } = recordingRail();
    const failure = await startReview({
      messages: [],
      instructions: 'uncommitted',
      rail,
      cwd: repo.path,
    }).catch((error: unknown) => error);
    expect(ReviewRefusal.isInstance(failure) && failure.message).toBe(
      'Nothing to review — the selected git diff is clean.',
    );
    expect(requests).toHaveLength(0);
  });

  it('reviews one commit by its SHA', async () => {
    const repo = repository();
    const sha = repo.commit('Raise the limit', { 'src/limits.ts': 'export const MAX = 50;\n' });
    const { rail, requests } = recordingRail();
    const review = await startReview({
      messages: [{ role: 'user', content: 'I raised the limit, please check' }],
      instructions: `commit ${sha.slice(0, 10)}`,
      rail,
      cwd: repo.path,
    });
    expect(review.goal).toBe(`Review commit ${sha.slice(0, 12)}`);
    expect(requests[0]?.context).toContain('Raise the limit');
    expect(requests[0]?.context).toContain('I raised the limit, please check');
  });
});
