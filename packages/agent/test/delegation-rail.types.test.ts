import type {
  DelegationDispatch,
  DelegationRail,
  DelegationRefused,
  DelegationRequest,
} from '@hermes/review-engine';
import { describe, expectTypeOf, it } from 'vitest';
import type { AgentDelegationRail, RailDispatch, RailRefusal, RailRequest } from '../src/index.js';

/*
 * `@hermes/agent` restates the rail review-engine declares instead of importing it (review-engine
 * is only a devDependency here). These checks run in `tsc` (the package typecheck) as well as in
 * vitest: if either side changes its shape, the build breaks.
 */

// Method parameters are bivariant in TypeScript, so both directions are checked explicitly.
const railFits = (rail: AgentDelegationRail): DelegationRail => rail;
const requestFits = (request: DelegationRequest): RailRequest => request;
const answerFits = (answer: RailDispatch | RailRefusal): DelegationDispatch | DelegationRefused =>
  answer;

describe('the delegation rail contract', () => {
  it('createDelegationRail satisfies review-engine’s DelegationRail in both directions', () => {
    expectTypeOf<AgentDelegationRail>().toExtend<DelegationRail>();
    expectTypeOf<DelegationRequest>().toExtend<RailRequest>();
    expectTypeOf<RailDispatch>().toExtend<DelegationDispatch>();
    expectTypeOf<RailRefusal>().toExtend<DelegationRefused>();
    expectTypeOf(railFits).toBeFunction();
    expectTypeOf(requestFits).toBeFunction();
    expectTypeOf(answerFits).toBeFunction();
  });
});
