/**
 * Every error code the bridge answers with — the JSON-RPC 2.0 codes and the application codes of
 * the reference's TUI gateway. One source of truth: the bridge, its tests and front ends import
 * these.
 */
export const RPC_ERROR_CODES = {
  /** The line is not JSON (or is longer than the line limit). */
  parseError: -32700,
  /** JSON, but not a JSON-RPC 2.0 request object. */
  invalidRequest: -32600,
  /** No such method. */
  methodNotFound: -32601,
  /** The params do not match the method's schema. */
  invalidParams: -32602,
  /** An unexpected failure inside the bridge (a bug; the message says what failed). */
  internalError: -32603,

  /** No such session in this bridge (`session_id` unknown, closed or never created). */
  sessionNotFound: 4001,
  /** A profile name that does not exist or is not valid. */
  profileNotFound: 4003,
  /** `slash.exec` with an empty command. */
  emptyCommand: 4004,
  /** The session is running a turn and the request needs it idle. */
  sessionBusy: 4009,
  /** `approval.respond` for a request that is not pending (answered, timed out, unknown). */
  approvalNotPending: 4010,
  /** The agent cannot run: no model configured, missing key, unknown provider… */
  agentUnavailable: 4012,
  /** The command must go through `command.dispatch` (or is not a dispatchable command). */
  useCommandDispatch: 4018,
  /** A subagent id that this session's spawn tree does not hold. */
  subagentNotFound: 4041,
  /** The bridge was embedded without a delegation rail (`Bridge.delegation` unset). */
  delegationUnavailable: 4042,

  /** Bot relay: invalid envelope id or roster entry. */
  botRelayInvalid: 4090,
  /** Bot relay: unknown envelope (never queued, already delivered or swept). */
  botRelayUnknownEnvelope: 4091,
  /** Bot relay: the envelope's TTL passed before it was delivered. */
  botRelayExpired: 4092,
  /** Bot relay: the target profile is not in a fresh roster / has no Bot Chat host. */
  botRelayNotHosted: 4093,
  /** Bot relay: the envelope already has a reply. */
  botRelayAlreadyReplied: 4094,

  /** The session store failed while listing sessions. */
  sessionStoreFailure: 5006,
  /** A slash command failed while it ran. */
  slashWorkerFailure: 5030,
  /** `profiles.list` failed. */
  profilesFailure: 5061,

  /** Bot relay: the relay folder (`<root>/bot_relay/`) cannot be created or opened. */
  botRelayStorage: 5090,
  /** Bot relay: `roster.json` could not be written. */
  botRelayRosterWrite: 5091,
  /** Bot relay: the outbox could not be read or an envelope not claimed. */
  botRelayDrain: 5092,
  /** Bot relay: delivery failed before the turn (the claim unreadable, the target's store failing). */
  botRelayDeliver: 5093,
  /** Bot relay: the reply file could not be written. */
  botRelayReplyWrite: 5094,
  /** Bot relay: the Bot Chat stayed busy past the turn wait (120 s). */
  botRelayTurnTimeout: 5095,
  /** Bot relay: the delivered turn failed or was cut off by the attempt timeout (600 s). */
  botRelayTurnFailed: 5096,
} as const;

export type RpcErrorCode = (typeof RPC_ERROR_CODES)[keyof typeof RPC_ERROR_CODES];

/** Fixed texts of the bridge (the reference's where it has one). */
export const RPC_ERROR_MESSAGES = {
  parseError: 'Parse error: the line is not valid JSON',
  lineTooLong: (limit: number) => `Parse error: the line is longer than ${limit} bytes`,
  invalidRequest: 'Invalid Request: expected a JSON-RPC 2.0 request object',
  methodNotFound: (method: string) => `Method not found: ${method}`,
  emptyCommand: 'empty command',
  sessionNotFound: (id: string) => `session not found: ${id}`,
  sessionBusy: 'session busy — wait for the current turn to finish or interrupt it',
  skillCommand: (name: string) => `skill command: use command.dispatch for /${name}`,
  pendingInputCommand: (name: string) =>
    `/${name} changes what the agent is asked: use command.dispatch`,
  notDispatchable: (name: string) => `not a quick/plugin/bundle/skill command: ${name}`,
  delegationUnavailable:
    'delegation is not available in this bridge (it was started without a delegation rail); /review and subagents need one',
} as const;

/** A JSON-RPC error a method throws on purpose; anything else becomes -32603. */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
  }

  static isInstance(error: unknown): error is RpcError {
    return error instanceof RpcError;
  }
}
