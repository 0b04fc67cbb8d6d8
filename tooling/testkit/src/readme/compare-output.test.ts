import { describe, expect, it } from 'vitest';
import { compareOutput } from './compare-output.js';

describe('compareOutput', () => {
  it('accepts the same lines, ignoring trailing spaces and blank lines at either end', () => {
    expect(compareOutput('30\nready\n', '\n30   \nready\n\n').matches).toBe(true);
  });

  it('refuses a changed, missing or extra line', () => {
    expect(compareOutput('30', '31').matches).toBe(false);
    expect(compareOutput('a\nb', 'a').matches).toBe(false);
    expect(compareOutput('a', 'a\nb').matches).toBe(false);
  });

  it('lets … stand for any text within one line, but not across lines', () => {
    expect(compareOutput('session 2026…_…', 'session 20260101_120000_abc123').matches).toBe(true);
    expect(compareOutput('id: …', 'id: \nmore').matches).toBe(false);
  });

  it('lets a line that is only … stand for any number of lines', () => {
    expect(compareOutput('start\n…\nend', 'start\nend').matches).toBe(true);
    expect(compareOutput('start\n…\nend', 'start\none\ntwo\nend').matches).toBe(true);
    expect(compareOutput('start\n…\nend', 'start\none\ntwo').matches).toBe(false);
  });

  it('treats regular-expression characters in the README literally', () => {
    expect(compareOutput('{ a: [1, 2] } (x+y)*', '{ a: [1, 2] } (x+y)*').matches).toBe(true);
    expect(compareOutput('a.c', 'abc').matches).toBe(false);
  });

  it('returns both sides normalised for the failure message', () => {
    expect(compareOutput('a  \n', 'b\n')).toEqual({ matches: false, expected: 'a', actual: 'b' });
  });
});
