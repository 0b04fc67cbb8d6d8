import {
  BOT_CHAT_TITLE,
  BOT_RELAY_ATTEMPT_TIMEOUT_SECONDS,
  BOT_RELAY_TURN_WAIT_SECONDS,
  type BotEnvelope,
  BotRelay,
  type SessionStore,
  SessionStoreError,
} from '@hermes/session-store';
import type { Bridge } from '../bridge.js';
import { RPC_ERROR_CODES, RpcError } from '../contract/error-codes.js';
import type { MethodParams, MethodResult } from '../contract/methods.js';
import type { LiveSession } from '../runtime/live-session.js';
import { startTurn } from '../runtime/turns.js';

/** A reply that means "nothing to say" (the bot chose silence). */
export const SILENCE_MARKERS: readonly string[] = ['NO_REPLY', '[SILENT]'];

type RelayStage = 'roster' | 'drain' | 'deliver' | 'reply';

const STORAGE_CODES: Record<RelayStage, number> = {
  roster: RPC_ERROR_CODES.botRelayRosterWrite,
  drain: RPC_ERROR_CODES.botRelayDrain,
  deliver: RPC_ERROR_CODES.botRelayDeliver,
  reply: RPC_ERROR_CODES.botRelayReplyWrite,
};

function relayError(stage: RelayStage, error: unknown): RpcError {
  if (RpcError.isInstance(error)) return error;
  if (SessionStoreError.isInstance(error)) {
    switch (error.code) {
      case 'invalid_envelope_id':
      case 'invalid_roster':
        return new RpcError(RPC_ERROR_CODES.botRelayInvalid, error.message);
      case 'unknown_envelope':
        return new RpcError(RPC_ERROR_CODES.botRelayUnknownEnvelope, error.message);
      case 'envelope_expired':
        return new RpcError(RPC_ERROR_CODES.botRelayExpired, error.message);
      case 'not_hosted':
        return new RpcError(RPC_ERROR_CODES.botRelayNotHosted, error.message);
      case 'already_replied':
        return new RpcError(RPC_ERROR_CODES.botRelayAlreadyReplied, error.message);
      case 'storage_failed':
        // The folder itself unusable is 5090 whatever was asked; otherwise the step's own code.
        return new RpcError(
          error.operation === 'prepare' ? RPC_ERROR_CODES.botRelayStorage : STORAGE_CODES[stage],
          error.message,
        );
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RpcError(
    stage === 'deliver' ? RPC_ERROR_CODES.botRelayDeliver : RPC_ERROR_CODES.botRelayStorage,
    `bot relay: ${message}`,
  );
}

function envelopeView(
  envelope: BotEnvelope,
): MethodResult<'bot_relay.outbox.drain'>['envelopes'][number] {
  return {
    id: envelope.id,
    to_profile: envelope.toProfile,
    from: envelope.from,
    message: envelope.message,
    reply_to: envelope.replyTo,
    created_at: envelope.createdAt,
    expires_at: envelope.expiresAt,
    attempts: envelope.attempts,
  };
}

/** The profile's canonical Bot Chat as a live session: found (resurrected if reaped) or created hidden. */
async function openBotChat(bridge: Bridge, profile: string): Promise<LiveSession> {
  let runtime: ReturnType<Bridge['registry']['resolve']>;
  try {
    runtime = bridge.registry.resolve(profile);
  } catch (error) {
    throw new RpcError(
      RPC_ERROR_CODES.botRelayNotHosted,
      `bot relay: profile ${profile} cannot host a Bot Chat here (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const store: SessionStore = await runtime.store();
  let row = store.getSessionByTitle(BOT_CHAT_TITLE, { includeHidden: true });
  if (row?.archived === 1) {
    await store.unarchiveRecoverableSession(row.id);
    row = store.getSession(row.id);
  }
  if (!row || row.archived === 1) {
    row = await runtime.run(() =>
      store.createSession({
        source: 'tui',
        profileName: runtime.name,
        title: BOT_CHAT_TITLE,
        titleSource: 'user',
        hidden: true,
      }),
    );
  }
  return bridge.openLive(runtime, store, row);
}

function waitUntilIdle(session: LiveSession, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  return (async () => {
    while (session.running || session.busy) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        session.running?.done ?? new Promise((resolve) => setTimeout(resolve, 50)),
        new Promise((resolve) => {
          timer = setTimeout(resolve, remaining);
        }),
      ]);
      clearTimeout(timer);
    }
    return true;
  })();
}

export function botRelayMethods(
  bridge: Bridge,
  options: { turnWaitMs?: number; attemptTimeoutMs?: number } = {},
) {
  const relay = () => new BotRelay({ root: bridge.registry.root });
  const turnWaitMs = options.turnWaitMs ?? BOT_RELAY_TURN_WAIT_SECONDS * 1000;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? BOT_RELAY_ATTEMPT_TIMEOUT_SECONDS * 1000;
  const delivering = new Set<string>();

  async function deliver(envelope: BotEnvelope): Promise<MethodResult<'bot_relay.deliver'>> {
    const session = await openBotChat(bridge, envelope.toProfile);
    if (!(await waitUntilIdle(session, turnWaitMs))) {
      await relay().releaseAfterFailure(envelope.id, 'the Bot Chat stayed busy');
      throw new RpcError(
        RPC_ERROR_CODES.botRelayTurnTimeout,
        `bot relay: the Bot Chat of ${envelope.toProfile} stayed busy for ${turnWaitMs / 1000} s`,
      );
    }
    const outcome = await new Promise<{ status: string; text: string; error: string | null }>(
      (resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        startTurn(session, {
          text: `[Bot relay message from ${envelope.from}]\n\n${envelope.message}`,
          origin: 'bot_relay',
          onIdle: (idle) => bridge.onIdle(idle),
          onResult: (result, failure) => {
            clearTimeout(timer);
            if (!result) reject(failure instanceof Error ? failure : new Error(String(failure)));
            else
              resolve({
                status: result.status,
                text: result.finalResponse,
                error: result.error?.message ?? null,
              });
          },
        }).then(() => {
          timer = setTimeout(
            () => session.running?.controller.abort(new Error('bot relay attempt timed out')),
            attemptTimeoutMs,
          );
          timer.unref();
        }, reject);
      },
    );
    if (outcome.status !== 'completed') {
      const reason = outcome.error ?? `the delivered turn ended ${outcome.status}`;
      await relay().releaseAfterFailure(envelope.id, reason);
      throw new RpcError(RPC_ERROR_CODES.botRelayTurnFailed, `bot relay: ${reason}`);
    }
    const silent = outcome.text.trim() === '' || SILENCE_MARKERS.includes(outcome.text.trim());
    await relay().reply(
      envelope.id,
      silent ? { status: 'no_reply' } : { status: 'delivered', text: outcome.text },
    );
    return {
      status: silent ? 'no_reply' : 'delivered',
      session_id: session.id,
      reply: silent ? null : outcome.text,
    };
  }

  return {
    async 'bot_relay.roster.sync'(params: MethodParams<'bot_relay.roster.sync'>) {
      for (const bot of params.bots) {
        try {
          bridge.registry.resolve(bot.profile);
        } catch (error) {
          throw new RpcError(
            RPC_ERROR_CODES.botRelayInvalid,
            error instanceof Error ? error.message : String(error),
          );
        }
      }
      try {
        const roster = await relay().syncRoster(
          params.bots.map((bot) => ({ profile: bot.profile, name: bot.name })),
        );
        return { synced_at: roster.syncedAt, count: roster.bots.length };
      } catch (error) {
        throw relayError('roster', error);
      }
    },

    async 'bot_relay.outbox.drain'(params: MethodParams<'bot_relay.outbox.drain'>) {
      try {
        const drained = await relay().drain({
          ...(params.profiles ? { profiles: params.profiles } : {}),
          ...(params.limit ? { limit: params.limit } : {}),
        });
        return {
          envelopes: drained.envelopes.map(envelopeView),
          expired: drained.expired,
          swept: drained.swept,
        };
      } catch (error) {
        throw relayError('drain', error);
      }
    },

    async 'bot_relay.deliver'(params: MethodParams<'bot_relay.deliver'>) {
      const id = params.envelope_id;
      if (delivering.has(id)) {
        // An envelope that is not claimed is unknown, whoever else is asking about it: only a
        // claimed one can be "being delivered".
        try {
          await relay().claimed(id);
        } catch (error) {
          throw relayError('deliver', error);
        }
        if (delivering.has(id))
          throw new RpcError(
            RPC_ERROR_CODES.botRelayDeliver,
            `bot relay: envelope ${id} is being delivered`,
          );
      }
      delivering.add(id);
      try {
        const envelope = await relay().claimed(id);
        if (relay().isExpired(envelope)) {
          await relay().reply(id, {
            status: 'queued_expired',
            error: 'the envelope expired before it was delivered',
          });
          throw new RpcError(
            RPC_ERROR_CODES.botRelayExpired,
            `bot relay: envelope ${id} expired before it was delivered`,
          );
        }
        return await deliver(envelope);
      } catch (error) {
        throw relayError('deliver', error);
      } finally {
        delivering.delete(id);
      }
    },

    async 'bot_relay.reply'(params: MethodParams<'bot_relay.reply'>) {
      try {
        await relay().reply(params.envelope_id, {
          status: params.status ?? (params.text ? 'delivered' : 'no_reply'),
          text: params.text ?? null,
          error: params.error ?? null,
        });
        return { recorded: true as const };
      } catch (error) {
        throw relayError('reply', error);
      }
    },
  };
}
