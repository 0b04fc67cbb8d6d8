import path from 'node:path';
import type { ProfileRuntime } from '@hermes/agent';
import type { Logger } from 'pino';
import type { RestoreGate } from '../restart/restore-gate.js';
import type { ActiveTurns } from '../runtime/active-turns.js';
import type { SlashCommands } from '../runtime/slash-commands.js';
import type { TurnOutcome, TurnRequest } from '../runtime/turn-runner.js';
import { PlatformConversations } from './conversations.js';
import { InboundJournal } from './inbound-journal.js';
import { OwedReplies, type ReplySender } from './owed-replies.js';

export interface PlatformLaneOptions {
  readonly runtime: ProfileRuntime;
  readonly turns: ActiveTurns;
  readonly gate: RestoreGate;
  readonly slash: SlashCommands;
  readonly logger: Logger;
  readonly timeScale: number;
  readonly runTurn: (request: TurnRequest) => Promise<TurnOutcome>;
  /** The sender of `platform` for this profile; undefined while it is not connected. */
  readonly sender: (platform: string) => ReplySender | undefined;
  readonly onTurn?: ((platform: string, status: string) => void) | undefined;
}

/**
 * One served profile's side of the messaging platforms: its inbound journal (in its own home),
 * the replies it owes (in its own `state.db`) and its conversations, whose turns run in its scope.
 * The launch profile has one for every platform; under multiplexing each other served profile
 * has one for the webhook routes it is reached by.
 */
export class PlatformLane {
  readonly runtime: ProfileRuntime;
  readonly journal: InboundJournal;
  readonly owed: OwedReplies;
  readonly conversations: PlatformConversations;
  readonly #logger: Logger;

  constructor(options: PlatformLaneOptions) {
    const { runtime, logger } = options;
    this.runtime = runtime;
    this.#logger = logger;
    this.journal = new InboundJournal(path.join(runtime.home, 'state', 'inbound'));
    this.owed = new OwedReplies({
      store: () => runtime.store(),
      adapter: options.sender,
      logger,
      timeScale: options.timeScale,
    });
    this.conversations = new PlatformConversations({
      runtime,
      turns: options.turns,
      journal: this.journal,
      owed: this.owed,
      gate: options.gate,
      slash: options.slash,
      logger,
      adapter: options.sender,
      runTurn: options.runTurn,
      ...(options.onTurn ? { onTurn: options.onTurn } : {}),
    });
  }

  /**
   * Claims what earlier runs owed on `platforms` in this profile's store (in the database, before
   * anything is sent) and adds it to the replies owed; resolves with how many.
   */
  async claim(platforms: readonly string[]): Promise<number> {
    const store = await this.runtime.store();
    const rows = await store.claimPendingObligations({ platforms }).catch((error: unknown) => {
      this.#logger.warn({ err: error, profile: this.runtime.name }, 'obligation claim failed');
      return [];
    });
    for (const row of rows) {
      this.owed.add({
        obligationId: row.obligationId,
        platform: row.platform,
        chatId: row.chatId,
        threadId: row.threadId,
        content: row.content,
        needsMarker: row.needsRecoveredMarker,
        notBefore: row.adopted ? row.notBefore : null,
      });
    }
    if (rows.length > 0)
      this.#logger.info(
        { count: rows.length, platforms, profile: this.runtime.name },
        'claimed owed replies of the previous run',
      );
    return rows.length;
  }
}
