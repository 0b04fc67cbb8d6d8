/** A subagent that is running now: what `list` shows and what `steer` / `stop` act on. */
export interface LiveSubagent {
  readonly subagentId: string;
  readonly delegationId: string;
  readonly goal: string;
  readonly taskIndex: number;
  /** The conversations whose spawn tree holds it (lineage roots, nearest first). */
  readonly owners: readonly string[];
  startedMs: number;
  status: 'pending' | 'running' | 'finishing';
  /** Steers queued and not read yet. */
  readonly steers: string[];
  stopRequested: boolean;
  apiCalls: number;
  maxIterations: number;
  currentTool: string | undefined;
  /** Monotonic ms of the child's last event (a delta counts). */
  lastActivityMs: number;
  /** Stops the child at once (timeouts, interrupts, shutdown). */
  readonly abort: (reason: string) => void;
}

/** What `delegate_task(action='list')` returns per subagent. */
export interface SubagentListing {
  readonly subagent_id: string;
  readonly delegation_id: string;
  readonly goal: string;
  readonly status: LiveSubagent['status'];
  readonly running_seconds: number;
  readonly accepting_steer: boolean;
  readonly api_calls: number;
  readonly current_tool: string | null;
}

/** The live subagents of one process (or one registry), scoped by owner for every action. */
export class SubagentTracker {
  readonly #live = new Map<string, LiveSubagent>();

  add(subagent: LiveSubagent): void {
    this.#live.set(subagent.subagentId, subagent);
  }

  remove(subagentId: string): void {
    this.#live.delete(subagentId);
  }

  /** A subagent in `owner`'s spawn tree, or undefined (another conversation's ids stay hidden). */
  find(owner: string, subagentId: string): LiveSubagent | undefined {
    const subagent = this.#live.get(subagentId);
    return subagent?.owners.includes(owner) ? subagent : undefined;
  }

  list(owner: string, nowMs = performance.now()): SubagentListing[] {
    return [...this.#live.values()]
      .filter((subagent) => subagent.owners.includes(owner))
      .map((subagent) => ({
        subagent_id: subagent.subagentId,
        delegation_id: subagent.delegationId,
        goal: subagent.goal,
        status: subagent.status,
        running_seconds: Math.round((nowMs - subagent.startedMs) / 100) / 10,
        accepting_steer: subagent.status !== 'finishing' && !subagent.stopRequested,
        api_calls: subagent.apiCalls,
        current_tool: subagent.currentTool ?? null,
      }));
  }

  /** The live subagents of one delegation (unit). */
  forDelegation(delegationId: string): LiveSubagent[] {
    return [...this.#live.values()].filter((subagent) => subagent.delegationId === delegationId);
  }

  get size(): number {
    return this.#live.size;
  }
}

/** The tracker children use when the process has no async registry (inline delegation only). */
export const processSubagents = new SubagentTracker();
