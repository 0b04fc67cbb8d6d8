import type { AgentEvent } from '@hermes/agent';
import type { Styles } from '../../output/style.js';

/** How much tool activity a chat shows (`/verbose`): none, one line per call, or calls and results. */
export type ToolDisplay = 'off' | 'new' | 'all';

export interface TurnRendererOptions {
  /** Where the answer goes (stdout). */
  readonly write: (text: string) => void;
  /** Where activity lines go (stderr for `-q`, the same stream in the terminal chat). */
  readonly writeActivity: (text: string) => void;
  /** True when both go to one stream (so activity must start on a fresh line). */
  readonly sharedStream: boolean;
  readonly styles: Styles;
  readonly tools: ToolDisplay;
}

export interface TurnRenderer {
  onEvent(event: AgentEvent): void;
  /** Ends the answer's line (call once the turn is over). */
  finish(): void;
  /** Whether any answer text was written. */
  readonly wroteText: boolean;
}

/** The most telling argument of a tool call, shortened: a path, a command, a pattern. */
export function summarizeArguments(raw: string, max = 70): string {
  let value: unknown;
  try {
    value = JSON.parse(raw) as unknown;
  } catch {
    return '';
  }
  if (!value || typeof value !== 'object') return '';
  const record = value as Record<string, unknown>;
  const preferred = ['command', 'path', 'pattern', 'name', 'goal', 'query'];
  const key =
    preferred.find((name) => typeof record[name] === 'string') ??
    Object.keys(record).find((name) => typeof record[name] === 'string');
  if (!key) return '';
  const text = String(record[key]).replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Renders one turn's events: the answer streamed as it arrives, tool activity as compact dim
 * lines (`⚙ read_file notes.txt`), retries, fallbacks and warnings as notes.
 */
export function createTurnRenderer(options: TurnRendererOptions): TurnRenderer {
  const { styles } = options;
  let atLineStart = true;
  let wroteText = false;
  const activity = (text: string) => {
    if (options.sharedStream && !atLineStart) {
      options.write('\n');
      atLineStart = true;
    }
    options.writeActivity(`${text}\n`);
  };
  return {
    get wroteText() {
      return wroteText;
    },
    onEvent(event) {
      switch (event.type) {
        case 'message.delta':
          if (event.text === '') return;
          options.write(event.text);
          wroteText = true;
          atLineStart = event.text.endsWith('\n');
          return;
        case 'tool.started': {
          if (options.tools === 'off') return;
          const summary = summarizeArguments(event.arguments);
          activity(styles.dim(`  ⚙ ${event.name}${summary ? ` ${summary}` : ''}`));
          return;
        }
        case 'tool.completed':
          if (options.tools === 'all') {
            const result = event.result.replace(/\s+/g, ' ').trim();
            activity(
              styles.dim(
                `    ↳ ${result.length > 100 ? `${result.slice(0, 99)}…` : result} (${event.durationMs} ms)`,
              ),
            );
          }
          return;
        case 'tool.failed':
          if (options.tools !== 'off') activity(styles.yellow(`  ✗ ${event.name}: ${event.error}`));
          return;
        case 'model.retry':
          activity(
            styles.dim(
              `  ↻ ${event.provider}: ${event.reason}; retrying in ${(event.delayMs / 1000).toFixed(1)} s`,
            ),
          );
          return;
        case 'model.fallback':
          activity(
            styles.yellow(`  ↪ switched from ${event.from} to ${event.to}: ${event.reason}`),
          );
          return;
        case 'session.compressed':
          activity(
            styles.dim(`  ⇣ compressed ${event.summarizedMessages} older messages to make room`),
          );
          return;
        case 'warning':
          activity(styles.yellow(`  ! ${event.message}`));
          return;
        default:
          return;
      }
    },
    finish() {
      if (!atLineStart) {
        options.write('\n');
        atLineStart = true;
      }
    },
  };
}
