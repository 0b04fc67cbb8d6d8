import { describe, expect, it } from 'vitest';
import { buildPidRecord, parsePidRecord } from './pid-record.js';

describe('parsePidRecord', () => {
  it('reads a JSON record, a BOM-prefixed one and a legacy bare integer', () => {
    const record = buildPidRecord({ pid: 42, argv: ['a'], startTime: 7, home: '/h' });
    expect(parsePidRecord(JSON.stringify(record))).toEqual({
      pid: 42,
      kind: 'hermes-gateway',
      argv: ['a'],
      start_time: 7,
      hermes_home: '/h',
    });
    expect(parsePidRecord(`\uFEFF${JSON.stringify({ pid: 5 })}`)).toEqual({ pid: 5 });
    expect(parsePidRecord(' 123\n')).toEqual({ pid: 123 });
  });

  it('answers null for empty, invalid, non-object and pid-less content', () => {
    for (const text of ['', '  ', 'abc', '[1]', '{"pid":"7"}', '{"pid":0}', '{"pid":1.5}', '0']) {
      expect(parsePidRecord(text)).toBeNull();
    }
  });
});
