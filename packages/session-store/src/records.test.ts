import { describe, expect, expectTypeOf, it } from 'vitest';
import { openTestStore } from '../test/helpers.js';
import type {
  AsyncDelegationRecord,
  DeliveryObligation,
  MessageRecord,
  SessionRecord,
} from './records.js';
import type {
  AsyncDelegationRow,
  DeliveryObligationRow,
  MessageRow,
  SessionRow,
} from './schema.js';
import type { UpdateSessionInput, UpdateSessionSchemaInput } from './sessions.js';
import type { UsageInput, UsageSchemaInput } from './usage.js';

describe('public record types', () => {
  it('match the drizzle schema exactly (checked by the type checker)', () => {
    expectTypeOf<SessionRecord>().toEqualTypeOf<SessionRow>();
    expectTypeOf<MessageRecord>().toEqualTypeOf<MessageRow>();
    expectTypeOf<DeliveryObligation>().toEqualTypeOf<DeliveryObligationRow>();
    expectTypeOf<AsyncDelegationRecord>().toEqualTypeOf<AsyncDelegationRow>();
    expectTypeOf<UsageInput>().toEqualTypeOf<UsageSchemaInput>();
    expectTypeOf<UpdateSessionInput>().toEqualTypeOf<UpdateSessionSchemaInput>();
  });

  it('carry every column the store returns', async () => {
    const { store } = await openTestStore();
    const session = await store.createSession({ id: 's', source: 'cli' });
    const keys: (keyof SessionRecord)[] = [
      'id',
      'systemPromptHash',
      'toolNames',
      'estimatedCostUsd',
      'lineageRootId',
    ];
    for (const key of keys) expect(session).toHaveProperty(key);
    expect(Object.keys(session)).toHaveLength(41);
  });
});
