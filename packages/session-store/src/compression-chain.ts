import { END_REASON } from './end-reasons.js';
import { CHAIN_CAP } from './limits.js';
import type { StoreContext } from './store-context.js';

interface ChildCandidate {
  id: string;
  parentId: string;
  endReason: string | null;
  endedAt: number | null;
  activity: number;
}

const CANDIDATE_COLUMNS = `id, parent_session_id AS parentId, end_reason AS endReason, ended_at AS endedAt,
  coalesce(last_activity_at, started_at) AS activity`;

/**
 * Walks forward over compression edges from `id` (at most CHAIN_CAP steps). At each step the
 * preferred child is one that was itself compressed (the chain continues), then a live one, then
 * the freshest. Branch, reset, delegate and tool children are never followed: edges are stored
 * explicitly in `parent_edge`, so reopening a parent cannot hide or invent a compression edge.
 */
export function getCompressionChain(context: StoreContext, id: string): string[] {
  const children = context.statement(
    `SELECT ${CANDIDATE_COLUMNS} FROM sessions WHERE parent_session_id = ? AND parent_edge = 'compression'`,
  );
  return walkChain(id, (current) => children.all(current) as ChildCandidate[]);
}

/**
 * The compression chains of many lineage roots in one statement: every compression child carries
 * its root's `lineage_root_id` (set when it is published, re-rooted when a middle row is deleted),
 * so the children of all the roots come back together from a partial index and the walk runs in
 * memory with the same preference as `getCompressionChain`. Roots without compression children
 * cost one index probe each and map to a chain of themselves.
 */
export function getCompressionChains(
  context: StoreContext,
  rootIds: readonly string[],
): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  if (rootIds.length === 0) return chains;
  const candidates = context
    .statement(
      `SELECT ${CANDIDATE_COLUMNS} FROM sessions
       WHERE parent_edge = 'compression' AND lineage_root_id IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(rootIds)) as ChildCandidate[];
  const byParent = new Map<string, ChildCandidate[]>();
  for (const candidate of candidates) {
    const siblings = byParent.get(candidate.parentId);
    if (siblings) siblings.push(candidate);
    else byParent.set(candidate.parentId, [candidate]);
  }
  for (const rootId of rootIds) {
    chains.set(
      rootId,
      byParent.size === 0 ? [rootId] : walkChain(rootId, (id) => byParent.get(id) ?? []),
    );
  }
  return chains;
}

function walkChain(id: string, childrenOf: (id: string) => ChildCandidate[]): string[] {
  const chain = [id];
  const seen = new Set(chain);
  let current = id;
  for (let step = 0; step < CHAIN_CAP; step += 1) {
    const next = preferredChild(childrenOf(current));
    if (!next || seen.has(next.id)) break;
    chain.push(next.id);
    seen.add(next.id);
    current = next.id;
  }
  return chain;
}

function preferredChild(children: readonly ChildCandidate[]): ChildCandidate | undefined {
  let best: ChildCandidate | undefined;
  for (const child of children) {
    if (
      !best ||
      rankChild(child) > rankChild(best) ||
      (rankChild(child) === rankChild(best) && child.activity > best.activity)
    ) {
      best = child;
    }
  }
  return best;
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
