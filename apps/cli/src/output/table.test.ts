import { describe, expect, it } from 'vitest';
import { colorEnabled, createStyles, visibleLength } from './style.js';
import { renderTable } from './table.js';

describe('colorEnabled', () => {
  it('colours a terminal, never a pipe, and obeys NO_COLOR and FORCE_COLOR', () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(colorEnabled({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colorEnabled({ isTTY: true }, { FORCE_COLOR: '0' })).toBe(false);
  });
});

describe('renderTable', () => {
  const rows = [
    { id: 'a', title: 'short', count: 2 },
    { id: 'bbbb', title: 'a much longer title that will not fit', count: 120 },
  ];
  const columns = [
    { header: 'ID', value: (row: (typeof rows)[number]) => row.id },
    { header: 'TITLE', value: (row: (typeof rows)[number]) => row.title, flexible: true },
    {
      header: 'N',
      value: (row: (typeof rows)[number]) => String(row.count),
      align: 'right' as const,
    },
  ];

  it('aligns columns and right-aligns numbers', () => {
    const text = renderTable(columns, rows, { styles: createStyles(false) });
    expect(text.split('\n')).toEqual([
      'ID    TITLE                                    N',
      'a     short                                    2',
      'bbbb  a much longer title that will not fit  120',
    ]);
  });

  it('shortens the flexible column to the width with an ellipsis', () => {
    const text = renderTable(columns, rows, { styles: createStyles(false), maxWidth: 30 });
    for (const line of text.split('\n')) expect(visibleLength(line)).toBeLessThanOrEqual(30);
    expect(text).toContain('…');
  });

  it('shares the room between two flexible columns, taking from the wider first', () => {
    const wide = [{ id: 'a', title: 'x'.repeat(30), note: 'y'.repeat(10) }];
    const twoFlexible = [
      { header: 'ID', value: (row: (typeof wide)[number]) => row.id },
      { header: 'TITLE', value: (row: (typeof wide)[number]) => row.title, flexible: true },
      { header: 'NOTE', value: (row: (typeof wide)[number]) => row.note, flexible: true },
    ];
    // 2 + 2 + 30 + 2 + 10 = 46 columns; at 35 the title gives all 11 and the note keeps its own.
    expect(renderTable(twoFlexible, wide, { styles: createStyles(false), maxWidth: 35 })).toBe(
      `ID  TITLE${' '.repeat(14)}  NOTE\na   ${'x'.repeat(18)}…  ${'y'.repeat(10)}`,
    );
    // At 24 both shrink, to the same width.
    const narrow = renderTable(twoFlexible, wide, { styles: createStyles(false), maxWidth: 24 });
    expect(narrow.split('\n')[1]).toBe(`a   ${'x'.repeat(8)}…  ${'y'.repeat(8)}…`);
  });

  it('adds no escapes without colour and bold headers with it', () => {
    expect(renderTable(columns, rows, { styles: createStyles(false) })).not.toContain('\u001b[');
    expect(renderTable(columns, rows, { styles: createStyles(true) })).toContain('\u001b[1mID');
  });
});
