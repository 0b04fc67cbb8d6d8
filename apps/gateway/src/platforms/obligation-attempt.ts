import { currentProcessIdentity, type SessionStore } from '@hermes/session-store';

/**
 * Marks this process's `pending` obligation `attempting` (and counts the attempt) right before
 * its send. If the process dies between the send and `completeObligation`, the next start's
 * claim sees `attempting` and prefixes the recovered marker — the chat is told the resend may be
 * a duplicate — instead of resending it unmarked. A row already `attempting` (claimed at boot,
 * which counted the attempt) is left as it is. Returns false when the row is not ours to send.
 *
 * Ledger-side logic that belongs in `@hermes/session-store` (as `beginObligationAttempt`); it
 * lives here, on the store's public `withWriteTransaction`, until that package takes it.
 */
export async function beginObligationAttempt(
  store: SessionStore,
  obligationId: string,
): Promise<boolean> {
  const owner = currentProcessIdentity();
  return store.withWriteTransaction((database) => {
    const row = database
      .prepare(
        `SELECT state FROM delivery_obligations
         WHERE obligation_id = ? AND owner_pid = ? AND owner_started_at IS ?`,
      )
      .get(obligationId, owner.pid, owner.startTicks) as { state: string } | undefined;
    if (!row) return false;
    if (row.state === 'attempting') return true;
    if (row.state !== 'pending') return false;
    database
      .prepare(
        `UPDATE delivery_obligations SET state = 'attempting', attempts = attempts + 1, updated_at = ?
         WHERE obligation_id = ? AND state = 'pending'`,
      )
      .run(Date.now() / 1000, obligationId);
    return true;
  });
}
