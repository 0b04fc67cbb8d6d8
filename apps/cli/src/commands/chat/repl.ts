import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { AgentError, type ApprovalDecision, type ApprovalRequest } from '@hermes/agent';
import { parseSlashInput } from '@hermes/commands';
import type { CommandContext } from '../../context.js';
import { EXIT } from '../../exit-codes.js';
import type { ChatRuntime } from './chat-runtime.js';
import { runSlashCommand, type SlashUi } from './slash-handlers.js';
import { createTurnRenderer, type TurnRenderer } from './turn-renderer.js';

/** Two Ctrl-C within this many milliseconds leave the chat. */
const DOUBLE_CTRL_C_MS = 2000;
const HISTORY_FILE = '.chat_history';
const HISTORY_SIZE = 500;

function loadHistory(home: string): string[] {
  try {
    return readFileSync(path.join(home, HISTORY_FILE), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(-HISTORY_SIZE)
      .reverse();
  } catch {
    return [];
  }
}

/** The pending approval question, answered by the next line typed. */
interface PendingApproval {
  resolve(decision: ApprovalDecision): void;
}

/**
 * The interactive terminal chat. One turn at a time; lines typed during an answer wait their
 * turn; commands run at once, stop the answer first, or are refused, as the registry says.
 * Ctrl-C interrupts the answer (twice leaves), Ctrl-D leaves. Background results (a `/review`)
 * come back as a new turn when the chat is idle, under a header.
 */
export async function runRepl(
  context: CommandContext,
  runtime: ChatRuntime,
  approvals: ApprovalBridge,
): Promise<number> {
  const { output } = context;
  const styles = output.styles;
  const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true;
  const rl: Interface = createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal,
    historySize: HISTORY_SIZE,
    ...(terminal ? { history: loadHistory(context.home) } : {}),
  });
  rl.setPrompt(terminal ? styles.bold(styles.cyan('› ')) : '');
  const queued: string[] = [];
  let pendingApproval: PendingApproval | undefined;
  let lastCtrlC = 0;
  let closing = false;
  let exitCode: number = EXIT.ok;
  let promptShown = false;
  let finish: (() => void) | undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });

  const write = (text: string) => process.stdout.write(text);
  const print = (text: string) => {
    if (promptShown && terminal) {
      // Clear the prompt line, print above it, and show the prompt again with what was typed.
      write('\r\u001b[2K');
      promptShown = false;
    }
    write(`${text}\n`);
  };
  const prompt = () => {
    if (closing || runtime.busy || pendingApproval) return;
    if (terminal) {
      rl.prompt(true);
      promptShown = true;
    }
  };

  const ui: SlashUi = {
    styles,
    version: context.version,
    interactive: true,
    toolDisplay: 'new',
    clearScreen: () => write('\u001b[2J\u001b[H'),
    queue: (text) => queued.push(text),
  };

  let currentDelivery: TurnRenderer | undefined;
  const newRenderer = (): TurnRenderer =>
    createTurnRenderer({
      write,
      writeActivity: write,
      sharedStream: true,
      styles,
      tools: ui.toolDisplay,
    });

  const leave = (code: number) => {
    if (closing) return;
    closing = true;
    exitCode = code;
    rl.close();
  };

  const runUserTurn = async (message: string): Promise<void> => {
    const render = newRenderer();
    promptShown = false;
    try {
      const result = await runtime.runTurn({ message, onEvent: (event) => render.onEvent(event) });
      render.finish();
      if (result.status === 'interrupted') print(styles.dim('(interrupted)'));
      else if (result.status === 'failed')
        print(styles.red(`hermes: ${result.error?.message ?? 'the turn failed'}`));
      else if (!render.wroteText) print(result.finalResponse);
      const missed = runtime.takeMissedSteers();
      if (missed.length > 0) {
        print(
          styles.yellow(
            `(the answer ended before your /steer reached it: "${missed.join(' / ')}" — send it as a message)`,
          ),
        );
      }
    } catch (error) {
      render.finish();
      if (AgentError.isInstance(error)) print(styles.red(`hermes: ${error.message}`));
      else print(styles.red(`hermes: unexpected error: ${(error as Error).message}`));
    }
  };

  const handle = async (line: string): Promise<void> => {
    const text = line.trim();
    if (text === '') return;
    if (terminal) {
      try {
        appendFileSync(path.join(context.home, HISTORY_FILE), `${line.replace(/\n/g, ' ')}\n`, {
          mode: 0o600,
        });
      } catch {
        // History is a convenience.
      }
    }
    const parsed = parseSlashInput(text);
    if (parsed.kind === 'empty') {
      print(styles.dim('Type /help for the commands.'));
      return;
    }
    if (parsed.kind === 'unknown') {
      print(`Unknown command /${parsed.name}. Type /help for the commands.`);
      return;
    }
    if (parsed.kind === 'command') {
      const result = await runSlashCommand(parsed.command, parsed.args, runtime, ui);
      if (result.text) print(result.text);
      if (result.exit) {
        leave(EXIT.ok);
        return;
      }
      if (result.turn !== undefined) await runUserTurn(result.turn);
      return;
    }
    await runUserTurn(line);
  };

  /** Runs queued lines one after another, then delivers what came back, then prompts. */
  let pumping = false;
  const pump = async (): Promise<void> => {
    if (pumping) return;
    pumping = true;
    try {
      while (queued.length > 0 && !runtime.busy) {
        const next = queued.shift() as string;
        await handle(next);
        if (closing && terminal) break;
      }
      if (!runtime.busy) await runtime.drainDeliveries().catch(() => 0);
    } finally {
      pumping = false;
    }
    if (closing && queued.length === 0 && !runtime.busy) {
      finish?.();
      return;
    }
    prompt();
  };

  const busyCommand = (line: string): boolean => {
    const parsed = parseSlashInput(line.trim());
    if (parsed.kind !== 'command') return false;
    const { command } = parsed;
    if (command.name === 'queue' || command.busyPolicy === 'dispatch') {
      void runSlashCommand(command, parsed.args, runtime, ui).then((result) => {
        // An answer is streaming: start the note on a line of its own.
        if (result.text) print(`\n${result.text}`);
      });
      return true;
    }
    if (command.busyPolicy === 'interrupt_then_dispatch') {
      runtime.interrupt();
      queued.unshift(line);
      return true;
    }
    print(styles.dim(`An answer is running: wait for it (or Ctrl-C), then /${command.name}.`));
    return true;
  };

  rl.on('line', (line) => {
    promptShown = false;
    if (pendingApproval) {
      const answer = line.trim().toLowerCase();
      const decision: ApprovalDecision =
        answer === 'o' || answer === 'once' || answer === 'y' || answer === 'yes'
          ? 'once'
          : answer === 's' || answer === 'session'
            ? 'session'
            : 'deny';
      const pending = pendingApproval;
      pendingApproval = undefined;
      pending.resolve(decision);
      return;
    }
    if (runtime.busy || pumping) {
      // Piped input is a script: every line, command or not, waits its turn.
      if (terminal && busyCommand(line)) return;
      queued.push(line);
      if (terminal) print(styles.dim('(queued: sent when the answer ends)'));
      return;
    }
    queued.push(line);
    void pump();
  });

  rl.on('SIGINT', () => {
    const now = Date.now();
    const twice = now - lastCtrlC < DOUBLE_CTRL_C_MS;
    lastCtrlC = now;
    if (pendingApproval) {
      const pending = pendingApproval;
      pendingApproval = undefined;
      pending.resolve('deny');
    }
    if (twice) {
      write('\n');
      leave(EXIT.interrupted);
      runtime.interrupt();
      return;
    }
    if (runtime.busy) {
      runtime.interrupt();
      write(styles.dim('\n(interrupting — Ctrl-C again to leave)\n'));
      return;
    }
    if (rl.line.length > 0) {
      // Clear what was typed, as shells do.
      write('\n');
      rl.write(null, { ctrl: true, name: 'u' });
      prompt();
      return;
    }
    write(styles.dim('\n(Ctrl-C again or Ctrl-D to leave)\n'));
    prompt();
  });

  rl.on('close', () => {
    if (!closing) {
      closing = true;
      // Ctrl-D on a terminal leaves now (stopping an answer); at the end of piped input, the
      // lines already read are answered first.
      if (terminal) runtime.interrupt();
    }
    if (!runtime.busy && !pumping && (queued.length === 0 || terminal)) finish?.();
    else void pump();
  });

  if (!terminal) {
    process.on('SIGINT', () => {
      runtime.interrupt();
      leave(EXIT.interrupted);
    });
  }

  // Approvals are asked inline: the next line answers.
  approvals.ask = (request, signal) =>
    new Promise<ApprovalDecision>((resolve) => {
      print(
        `${styles.yellow('⚠')} ${request.toolName} wants to run: ${styles.bold(request.command)}\n  ${styles.dim(request.reason)}\n  Allow? [o]nce, [s]ession, [d]eny (default): `,
      );
      pendingApproval = { resolve };
      signal.addEventListener('abort', () => {
        if (pendingApproval?.resolve === resolve) pendingApproval = undefined;
        resolve('deny');
      });
    });

  // Every handler is in place: from here on Ctrl-C and typed lines are ours.
  if (terminal) printBanner(context, runtime);
  await runtime.startDelivery({
    onStart: (event) => {
      print(
        `\n${styles.bold(styles.magenta(`── Background result: ${event.goal} (${event.status}) ──`))}`,
      );
      for (const result of event.results)
        print(result.summary ?? styles.dim(describeNoSummary(result)));
      print(styles.bold(styles.magenta('── hermes ──')));
      currentDelivery = newRenderer();
    },
    onEvent: (event) => currentDelivery?.onEvent(event),
    onDone: () => {
      currentDelivery?.finish();
      currentDelivery = undefined;
      void pump();
    },
    onError: (error) =>
      print(styles.dim(`(a background result will be retried: ${(error as Error).message})`)),
  });

  prompt();
  await finished;
  const pending = runtime.pendingBackground();
  if (pending > 0) {
    process.stderr.write(
      styles.dim(
        `(${pending} background result${pending === 1 ? '' : 's'} still pending: running agents stop now (a review starts over on the next start), and what they report comes back the next time you open this conversation: hermes chat --resume ${runtime.sessionId ?? ''})\n`,
      ),
    );
  }
  return exitCode;
}

/** What to show for a subagent that produced no answer: its status and why. */
export function describeNoSummary(result: { status: string; error?: string | undefined }): string {
  return `(no result: the subagent ended ${result.status}${result.error ? ` — ${result.error}` : ''})`;
}

/** Lets the agent (built before the chat starts) ask the user once the chat can. */
export interface ApprovalBridge {
  ask?: (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalDecision>;
}

function printBanner(context: CommandContext, runtime: ChatRuntime): void {
  const { styles } = context.output;
  let model: string;
  try {
    model = runtime.agent.route().model;
  } catch {
    model = styles.yellow(
      'no model configured (hermes config set model.base_url … and model.default …)',
    );
  }
  const session = runtime.sessionId ? `session ${runtime.sessionId}` : 'new session';
  process.stdout.write(
    `${styles.bold('hermes')} · ${model} · ${session}  ${styles.dim('/help for commands · Ctrl-C interrupts · Ctrl-D leaves')}\n`,
  );
}
