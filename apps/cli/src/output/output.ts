import { colorEnabled, createStyles, type Styles } from './style.js';
import { type Column, renderTable } from './table.js';

/** How a command prints: data to stdout, notes and progress to stderr. */
export interface Output {
  /** `--json`: commands print one JSON document on stdout and nothing else there. */
  readonly json: boolean;
  readonly styles: Styles;
  /** Styles for stderr (its own TTY check). */
  readonly errorStyles: Styles;
  readonly stdoutIsTty: boolean;
  readonly stderrIsTty: boolean;
  /** A line on stdout. */
  line(text?: string): void;
  /** A note on stderr (progress, hints, warnings). */
  note(text: string): void;
  warn(text: string): void;
  /** Prints `value` as JSON on stdout (pretty on a TTY). */
  printJson(value: unknown): void;
  table<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): void;
}

export function createOutput(options: { json: boolean }): Output {
  const stdoutIsTty = process.stdout.isTTY === true;
  const stderrIsTty = process.stderr.isTTY === true;
  const styles = createStyles(colorEnabled(process.stdout));
  const errorStyles = createStyles(colorEnabled(process.stderr));
  return {
    json: options.json,
    styles,
    errorStyles,
    stdoutIsTty,
    stderrIsTty,
    line(text = '') {
      process.stdout.write(`${text}\n`);
    },
    note(text) {
      process.stderr.write(`${text}\n`);
    },
    warn(text) {
      process.stderr.write(`${errorStyles.yellow('warning:')} ${text}\n`);
    },
    printJson(value) {
      process.stdout.write(`${JSON.stringify(value, null, stdoutIsTty ? 2 : undefined)}\n`);
    },
    table(columns, rows) {
      // A pseudo-terminal whose size was never set reports 0 columns: that is unknown, not narrow.
      const maxWidth = stdoutIsTty ? process.stdout.columns || 100 : undefined;
      process.stdout.write(`${renderTable(columns, rows, { styles, maxWidth })}\n`);
    },
  };
}
