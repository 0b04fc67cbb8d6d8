import { readFileSync } from 'node:fs';
import { AgentError, type AsyncDelegationEvent, type TurnResult } from '@hermes/agent';
import { parseSlashInput } from '@hermes/commands';
import type { CommandContext } from '../../context.js';
import { CliError, usageError } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import type { ChatRuntime } from './chat-runtime.js';
import { describeNoSummary } from './repl.js';
import { runSlashCommand, type SlashUi } from './slash-handlers.js';
import { createTurnRenderer } from './turn-renderer.js';

export interface OneShotOptions {
  readonly query: string;
  readonly wait: boolean;
}

function readQuery(query: string): string {
  if (query !== '-') return query;
  if (process.stdin.isTTY)
    throw usageError('-q - reads the message from stdin, but stdin is a terminal');
  return readFileSync(0, 'utf8');
}

/** What background results looked like when they came back, for `--json`. */
interface Delivered {
  delegation_id: string;
  goal: string;
  status: string;
  summaries: (string | null)[];
  reply: string | undefined;
}

function summariesOf(event: AsyncDelegationEvent): (string | null)[] {
  return event.results.map((result) => result.summary);
}

/**
 * `hermes chat -q "<message>"`: one turn, the answer on stdout (streamed), activity on stderr.
 * With `--wait`, background work the turn started (a `/review`, a background `delegate_task`) is
 * waited for; each result comes back as a turn whose answer is printed too.
 */
export async function runOneShot(
  context: CommandContext,
  runtime: ChatRuntime,
  options: OneShotOptions,
): Promise<number> {
  const message = readQuery(options.query);
  if (message.trim() === '') throw usageError('the message is empty');
  const { output } = context;
  const json = output.json;
  const stdout = (text: string) => {
    if (!json) process.stdout.write(text);
  };
  const renderer = () =>
    createTurnRenderer({
      write: stdout,
      writeActivity: (text) => process.stderr.write(text),
      sharedStream: false,
      styles: output.errorStyles,
      tools: 'new',
    });
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(EXIT.interrupted);
    interrupted = true;
    runtime.interrupt();
    process.stderr.write('\nInterrupting… (Ctrl-C again to quit now)\n');
  };
  process.on('SIGINT', onSigint);
  const delivered: Delivered[] = [];
  try {
    if (options.wait) {
      await runtime.startDelivery({
        onStart: (event) => {
          if (!json) {
            process.stdout.write(
              `\n── Background result: ${event.goal} (${event.status}) ──\n${event.results
                .map((entry) => entry.summary ?? describeNoSummary(entry))
                .join('\n\n')}\n── hermes ──\n`,
            );
          }
          delivered.push({
            delegation_id: event.delegation_id,
            goal: event.goal,
            status: event.status,
            summaries: summariesOf(event),
            reply: undefined,
          });
        },
        onEvent: (() => {
          let current = renderer();
          return (event) => {
            if (event.type === 'run.started') current = renderer();
            current.onEvent(event);
            if (
              event.type === 'run.completed' ||
              event.type === 'run.failed' ||
              event.type === 'run.interrupted'
            ) {
              current.finish();
            }
          };
        })(),
        onDone: (delivery) => {
          const last = delivered.at(-1);
          if (last && last.delegation_id === delivery.event.delegation_id)
            last.reply = delivery.turn?.finalResponse;
        },
        onError: (error) =>
          process.stderr.write(
            `hermes: background result not delivered yet: ${(error as Error).message}\n`,
          ),
      });
    }
    const ui: SlashUi = {
      styles: output.styles,
      version: context.version,
      interactive: false,
      toolDisplay: 'new',
      clearScreen: () => {},
      queue: () => {},
    };
    const parsed = parseSlashInput(message.trim());
    let turnMessage: string | undefined = message;
    let commandText: string | undefined;
    if (parsed.kind === 'unknown') {
      throw usageError(
        `unknown command /${parsed.name}`,
        'hermes chat, then /help, lists the commands',
      );
    }
    if (parsed.kind === 'command') {
      const result = await runSlashCommand(parsed.command, parsed.args, runtime, ui);
      if (result.failure) {
        throw new CliError({
          code: result.failure.code,
          message: result.text ?? `/${parsed.command.name} could not be done`,
          exitCode: result.failure.usage ? EXIT.usage : EXIT.failure,
        });
      }
      commandText = result.text;
      turnMessage = result.turn;
      if (commandText !== undefined && !json) process.stdout.write(`${commandText}\n`);
    }
    let result: TurnResult | undefined;
    if (turnMessage !== undefined) {
      const render = renderer();
      try {
        result = await runtime.runTurn({
          message: turnMessage,
          onEvent: (event) => render.onEvent(event),
        });
      } catch (error) {
        if (AgentError.isInstance(error)) {
          throw new CliError({ code: error.code, message: error.message });
        }
        throw error;
      }
      render.finish();
      if (!render.wroteText && result.status === 'completed') stdout(`${result.finalResponse}\n`);
    }
    if (options.wait && result?.status !== 'interrupted') {
      // Wait for what the turn (or /review) started, delivering each result as it comes.
      while (!interrupted && runtime.pendingBackground() > 0) {
        await runtime.drainDeliveries();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    if (json) {
      output.printJson({
        session_id: runtime.sessionId ?? null,
        ...(commandText !== undefined ? { command_output: commandText } : {}),
        ...(result
          ? {
              status: result.status,
              exit_reason: result.exitReason,
              final_response: result.finalResponse,
              usage: result.usage,
              ...(result.error ? { error: result.error } : {}),
            }
          : { status: 'completed' }),
        ...(options.wait ? { background: delivered } : {}),
      });
    }
    if (result?.status === 'failed') {
      if (!json) process.stderr.write(`hermes: ${result.error?.message ?? 'the turn failed'}\n`);
      return EXIT.failure;
    }
    if (interrupted || result?.status === 'interrupted') return EXIT.interrupted;
    return EXIT.ok;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
