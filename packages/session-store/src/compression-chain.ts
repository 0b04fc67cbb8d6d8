import { END_REASON } from './end-reasons.js';
import { CHAIN_CAP } from './limits.js';
import type { StoreContext } from './store-context.js';

interface ChildCandidate {
  id: string;
  endReason: string | null;
  endedAt: number | null;
  activity: number;
}

/**
 * Walks forward over compression edges from `id` (at most CHAIN_CAP steps). At each step the
 * preferred child is one that was itself compressed (the chain continues), then a live one, then
 * the freshest. Branch, reset, delegate and tool children are never followed: edges are stored
 * explicitly in `parent_edge`, so reopening a parent cannot hide or invent a compression edge.
 */
export function getCompressionChain(context: StoreContext, id: string): string[] {
  const chain = [id];
  const seen = new Set(chain);
  let current = id;
  for (let step = 0; step < CHAIN_CAP; step += 1) {
    const children = context
      .statement(
        `SELECT id, end_reason AS endReason, ended_at AS endedAt, coalesce(last_activity_at, started_at) AS activity
         FROM sessions WHERE parent_session_id = ? AND parent_edge = 'compression'`,
      )
      .all(current) as ChildCandidate[];
    if (children.length === 0) break;
    children.sort(
      (left, right) => rankChild(right) - rankChild(left) || right.activity - left.activity,
    );
    const next = children[0];
    if (!next || seen.has(next.id)) break;
    chain.push(next.id);
    seen.add(next.id);
    current = next.id;
  }
  return chain;
}

function rankChild(child: ChildCandidate): number {
  if (child.endReason === END_REASON.compression) return 2;
  return child.endedAt === null ? 1 : 0;
}

/** The live end of the conversation that `id` belongs to (judged from the lineage root). */
export function getCompressionTip(context: StoreContext, id: string): string {
  const root = context
    .statement('SELECT lineage_root_id FROM sessions WHERE id = ?')
    .pluck()
    .get(id) as string | undefined;
  const chain = getCompressionChain(context, root ?? id);
  return chain[chain.length - 1] ?? id;
}
