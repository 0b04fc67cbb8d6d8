import type { Bridge } from '../bridge.js';
import { RPC_ERROR_CODES, RPC_ERROR_MESSAGES, RpcError } from '../contract/error-codes.js';
import type { MethodParams, MethodResult } from '../contract/methods.js';
import type { DelegationSupport } from '../runtime/delegation-support.js';

function requireDelegation(bridge: Bridge): DelegationSupport {
  if (!bridge.delegation)
    throw new RpcError(
      RPC_ERROR_CODES.delegationUnavailable,
      RPC_ERROR_MESSAGES.delegationUnavailable,
    );
  return bridge.delegation;
}

function notFound(subagentId: string): RpcError {
  return new RpcError(
    RPC_ERROR_CODES.subagentNotFound,
    `no live subagent ${subagentId} in this session's spawn tree`,
  );
}

export function subagentMethods(bridge: Bridge) {
  return {
    async 'subagent.list'(
      params: MethodParams<'subagent.list'>,
    ): Promise<MethodResult<'subagent.list'>> {
      const session = bridge.session(params.session_id);
      return { subagents: [...(await requireDelegation(bridge).list(session))] };
    },

    async 'subagent.steer'(
      params: MethodParams<'subagent.steer'>,
    ): Promise<MethodResult<'subagent.steer'>> {
      const session = bridge.session(params.session_id);
      const outcome = await requireDelegation(bridge).steer(
        session,
        params.subagent_id,
        params.message,
      );
      if (!outcome) throw notFound(params.subagent_id);
      return outcome.reason === undefined
        ? { status: outcome.status }
        : { status: outcome.status, reason: outcome.reason };
    },

    async 'subagent.interrupt'(
      params: MethodParams<'subagent.interrupt'>,
    ): Promise<MethodResult<'subagent.interrupt'>> {
      const session = bridge.session(params.session_id);
      const status = await requireDelegation(bridge).stop(session, params.subagent_id);
      if (!status) throw notFound(params.subagent_id);
      return { status };
    },
  };
}
