import { type Styles, visibleLength } from './style.js';

export interface Column<Row> {
  readonly header: string;
  readonly value: (row: Row) => string;
  /** Right-align (numbers). */
  readonly align?: 'left' | 'right';
  /** May be shortened with `…` to fit the terminal (at most one flexible column per table). */
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
  const cells = rows.map((row) => columns.map((column) => column.value(row).replace(/\s+/g, ' ')));
  const widths = columns.map((column, index) =>
    Math.max(
      visibleLength(column.header),
      ...cells.map((line) => visibleLength(line[index] ?? '')),
    ),
  );
  const gap = 2;
  if (options.maxWidth !== undefined) {
    const total = widths.reduce((sum, width) => sum + width, 0) + gap * (columns.length - 1);
    const flexible = columns.findIndex((column) => column.flexible);
    if (total > options.maxWidth && flexible >= 0) {
      const shrink = total - options.maxWidth;
      widths[flexible] = Math.max(
        visibleLength(columns[flexible]?.header ?? '') + 1,
        (widths[flexible] ?? 0) - shrink,
      );
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
