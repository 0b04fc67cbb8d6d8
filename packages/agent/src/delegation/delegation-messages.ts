/**
 * Every text delegation shows a model or a person, in one place (tests import these). The
 * `{"error": …}` texts follow the reference's wording (§6.3) where it is pinned.
 */
export const DELEGATION_ERROR_MESSAGES = {
  noParent: 'delegate_task requires a parent agent context.',
  unknownAction: (action: string) =>
    `Unknown action '${action}'. Use spawn (default), list, steer, or stop.`,
  notAvailable: "delegate_task is not available in the parent agent's resolved toolset.",
  paused:
    'Delegation spawning is paused. Clear the pause via the TUI (`p` in /agents) or the `delegation.pause` RPC before retrying.',
  depthLimit: (depth: number, maxSpawnDepth: number) =>
    `Delegation depth limit reached (depth=${depth}, max_spawn_depth=${maxSpawnDepth}). Raise delegation.max_spawn_depth in config.yaml if deeper nesting is really needed; otherwise do this work yourself.`,
  tasksNotJson: (detail: string) =>
    `Invalid 'tasks': expected an array of task objects (or its JSON text); ${detail}`,
  tasksNotArray: (type: string) =>
    `Invalid 'tasks': expected an array of task objects, got ${type}.`,
  tooManyTasks: (count: number, max: number) =>
    `Too many tasks: ${count} provided, but max_concurrent_children is ${max}. Send at most ${max} tasks per call (split the rest into a later call), or raise delegation.max_concurrent_children in config.yaml.`,
  noTasks:
    "No tasks provided. Pass tasks=[{goal: '...', context: '...'}, ...] — one entry per subagent (a single task is a one-entry array).",
  taskNotObject: (index: number, type: string) => `Task ${index} must be an object, got ${type}.`,
  taskMissingGoal: (index: number) => `Task ${index} is missing a 'goal'.`,
  placeholderGoal: (index: number, goal: string) =>
    `Task ${index} has a placeholder goal (${JSON.stringify(goal)}). Write out what that subagent must do — it knows nothing but what you pass.`,
  templateGoal: (index: number, marker: string) =>
    `Task ${index} goal still contains the template marker ${marker}. Fill in the real value before delegating.`,
  shortGoal: (index: number, goal: string) =>
    `Task ${index} goal is too short (${JSON.stringify(goal)}); in a batch every goal needs at least 10 characters saying what to do.`,
  outputSchemaInvalid: (index: number, detail: string) =>
    `Task ${index} output_schema invalid: ${detail}`,
  tooManyImages: (index: number, count: number) =>
    `Task ${index} has ${count} images; the per-task limit is 8. Pass at most 8 image paths or URLs per task.`,
  imagesInvalid: (index: number) =>
    `Task ${index} images must be a path or URL, or a list of non-empty paths or URLs.`,
  oneshotExhausted: (spawned: number, cap: number) =>
    `Delegation budget for this one-shot run is exhausted (${spawned}/${cap} subagents used; delegation.oneshot_max_children). Do the remaining work yourself, or run the agent interactively to delegate more.`,
  capacity: (running: number) =>
    `Async delegation capacity reached (${running} running). Wait for one to finish (its result will re-enter the chat), or raise delegation.max_concurrent_children in config.yaml.`,
  stalled: (delegationId: string, quietSeconds: number, phase: 'idle' | 'in_tool') =>
    `Async delegation ${delegationId} stalled: no progress for ${quietSeconds}s ${phase === 'in_tool' ? 'inside a tool call' : 'while idle'}, and it did not stop within the grace period after being interrupted. Re-dispatch the task if it is still needed.`,
  parentInterrupted: 'Parent agent interrupted — child did not finish in time',
  resumeFailed: (detail: string) =>
    `The delegation's process stopped before it finished and it could not be run again (${detail}); outcome unknown.`,
  interruptedWaiting:
    'Interrupted while it waited for a free slot (delegation.max_concurrent_children) to be run again after a restart; it did not run.',
  childTimeout: (seconds: number) =>
    `Subagent made no progress for ${seconds}s (delegation.child_timeout_seconds) and was stopped.`,
  childFailedEmpty: 'The subagent ended without a usable summary.',
  subagentUnknown: (id: string) => `No live subagent '${id}' in this conversation.`,
  subagentIdRequired: (action: string) => `action '${action}' needs a subagent_id.`,
  steerMessageRequired: "action 'steer' needs a non-empty message.",
  steerNotAccepted: (id: string) =>
    `Subagent '${id}' is no longer accepting steers (it is finishing).`,
  anthropicUnsupported: (where: string) =>
    `${where} uses the anthropic_messages protocol, which this agent does not speak — use a chat_completions or codex_responses endpoint.`,
  providerUnresolved: (provider: string, detail: string) =>
    `Cannot resolve delegation provider '${provider}': ${detail}`,
  providerNoKey: (provider: string, detail: string) =>
    `Delegation provider '${provider}' resolved but has no API key: ${detail}`,
  providerNoBaseUrl: (provider: string, detail: string) =>
    `Delegation provider '${provider}' resolved without a base_url: ${detail}`,
} as const;

/** Notes added to a result the rail had to run inline. */
export const DELEGATION_NOTES = {
  noAsync:
    'background=true is not available in this session (nothing here can deliver a later result), so the delegation ran SYNCHRONOUSLY and the result is included above.',
  atCapacity: (running: number) =>
    `The async delegation pool is full (${running} running), so this delegation ran SYNCHRONOUSLY and the result is included above.`,
  dispatched: (count: number) =>
    count === 1
      ? 'The subagent is working in the background. Its result re-enters this conversation as one new message, only after you END YOUR TURN — do not poll, sleep or wait for it; carry on or end your turn.'
      : `${count} subagents are working in the background. Their results re-enter this conversation as one new message, only after you END YOUR TURN — do not poll, sleep or wait for them; carry on or end your turn.`,
  resumed: (count: number) =>
    `Resumed after a restart: ${count === 1 ? 'the first run' : `${count} earlier runs`} stopped with ${count === 1 ? 'its process' : 'their process'} (a restart or a crash) before finishing, so the task was run again from the start. What follows is from the last run.`,
  controlHint:
    "Use delegate_task(action='list') to see them, action='steer' with subagent_id and message to redirect one, action='stop' to end one.",
} as const;

/** The steer marker the summary gets when a steer was queued but never read. */
export function missedSteerNote(text: string): string {
  return `[steer did not land — the subagent finished before reading it: ${JSON.stringify(text)}]`;
}
