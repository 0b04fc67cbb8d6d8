import type { Bridge } from '../bridge.js';
import { RPC_ERROR_CODES, RpcError } from '../contract/error-codes.js';
import type { MethodParams } from '../contract/methods.js';
import type { CallContext } from '../rpc/connection.js';

export function promptMethods(bridge: Bridge) {
  return {
    async 'prompt.submit'(params: MethodParams<'prompt.submit'>, context: CallContext) {
      const session = bridge.session(params.session_id);
      // The caller sees this session's events from now on, even if it only knew the id — unless
      // the prompt is refused: joining a turn midway is session.resume's (it replays the start).
      const wasAttached = session.isAttached(context.connection);
      session.attach(context.connection);
      session.hold();
      try {
        const runId = await bridge.submit(session, params.text);
        return { run_id: runId, session_id: session.id };
      } catch (error) {
        if (!wasAttached) session.detach(context.connection);
        throw error;
      } finally {
        context.afterReply(() => session.release());
      }
    },

    async 'prompt.interrupt'(params: MethodParams<'prompt.interrupt'>) {
      const session = bridge.session(params.session_id);
      const running = session.running;
      if (!running) return { interrupted: false };
      running.controller.abort(new Error('interrupted by the front end'));
      return { interrupted: true };
    },

    async 'approval.respond'(params: MethodParams<'approval.respond'>) {
      const session = bridge.session(params.session_id);
      const pending = session.approvals.get(params.request_id);
      if (!pending) {
        throw new RpcError(
          RPC_ERROR_CODES.approvalNotPending,
          `no approval request ${params.request_id} is pending in this session (answered, timed out or unknown)`,
        );
      }
      pending.resolve(params.decision);
      return { accepted: true as const };
    },
  };
}
