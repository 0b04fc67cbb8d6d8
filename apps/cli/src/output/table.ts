import { printable } from './format.js';
import { type Styles, visibleLength } from './style.js';

export interface Column<Row> {
  readonly header: string;
  readonly value: (row: Row) => string;
  /** Right-align (numbers). */
  readonly align?: 'left' | 'right';
  /** May be shortened with `…` to fit the terminal (the widest flexible column first). */
  readonly flexible?: boolean;
  readonly style?: (text: string, row: Row) => string;
}

function truncate(text: string, width: number): string {
  const characters = [...text];
  if (characters.length <= width) return text;
  if (width <= 1) return '…'.slice(0, width);
  return `${characters.slice(0, width - 1).join('')}…`;
}

/**
 * Columns separated by two spaces, a bold header on a TTY, the flexible column shortened to fit
 * `maxWidth` (the terminal's width; none when printing to a pipe, so nothing is cut).
 */
export function renderTable<Row>(
  columns: readonly Column<Row>[],
  rows: readonly Row[],
  options: { styles: Styles; maxWidth?: number | undefined },
): string {
  const cells = rows.map((row) =>
    columns.map((column) => printable(column.value(row).replace(/\s+/g, ' '))),
  );
  const widths = columns.map((column, index) =>
    Math.max(
      visibleLength(column.header),
      ...cells.map((line) => visibleLength(line[index] ?? '')),
    ),
  );
  const gap = 2;
  if (options.maxWidth !== undefined) {
    let excess =
      widths.reduce((sum, width) => sum + width, 0) + gap * (columns.length - 1) - options.maxWidth;
    // One character at a time off the widest flexible column that can still give one, so two
    // long columns end up sharing the room rather than one of them vanishing.
    const floor = columns.map((column) => visibleLength(column.header) + 1);
    while (excess > 0) {
      let widest = -1;
      columns.forEach((column, index) => {
        const width = widths[index] ?? 0;
        if (column.flexible && width > (floor[index] ?? 0) && width > (widths[widest] ?? -1)) {
          widest = index;
        }
      });
      if (widest < 0) break;
      widths[widest] = (widths[widest] ?? 0) - 1;
      excess -= 1;
    }
  }
  const pad = (text: string, width: number, align: 'left' | 'right' | undefined) => {
    const fill = ' '.repeat(Math.max(0, width - visibleLength(text)));
    return align === 'right' ? fill + text : text + fill;
  };
  const lines: string[] = [];
  lines.push(
    columns
      .map((column, index) =>
        options.styles.bold(pad(column.header, widths[index] ?? 0, column.align)),
      )
      .join(' '.repeat(gap))
      .trimEnd(),
  );
  rows.forEach((row, rowIndex) => {
    const line = columns.map((column, index) => {
      const width = widths[index] ?? 0;
      const text = truncate(cells[rowIndex]?.[index] ?? '', width);
      const padded = pad(text, width, column.align);
      return column.style ? column.style(padded, row) : padded;
    });
    lines.push(line.join(' '.repeat(gap)).trimEnd());
  });
  return lines.join('\n');
}
