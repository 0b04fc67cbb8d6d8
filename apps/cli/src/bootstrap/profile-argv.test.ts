import { describe, expect, it } from 'vitest';
import { extractProfileOption } from './profile-argv.js';

describe('extractProfileOption', () => {
  it.each([
    [['-p', 'work', 'sessions', 'list'], 'work'],
    [['sessions', 'list', '--profile', 'work'], 'work'],
    [['--profile=work', 'chat'], 'work'],
    [['-p=work', 'chat'], 'work'],
    [['-pwork', 'chat'], 'work'],
  ])('takes the profile out of %j', (argv, profile) => {
    const result = extractProfileOption(argv);
    expect(result).toMatchObject({ ok: true, profile });
    expect(result.ok && result.argv.some((word) => word.includes('work'))).toBe(false);
  });

  it('leaves the value of a free-text option alone, even when it is "-p"', () => {
    const result = extractProfileOption(['chat', '-q', '-p', '--json']);
    expect(result).toEqual({ ok: true, profile: undefined, argv: ['chat', '-q', '-p', '--json'] });
  });

  it('stops at "--"', () => {
    const result = extractProfileOption(['peer', 'dm', 'bob', '--', '-p', 'x']);
    expect(result).toEqual({
      ok: true,
      profile: undefined,
      argv: ['peer', 'dm', 'bob', '--', '-p', 'x'],
    });
  });

  it('refuses a missing name and two different names', () => {
    expect(extractProfileOption(['-p'])).toMatchObject({ ok: false });
    expect(extractProfileOption(['-p', '--json'])).toMatchObject({ ok: false });
    expect(extractProfileOption(['-p', 'a', '--profile', 'b'])).toMatchObject({
      ok: false,
      message: expect.stringMatching(/given twice/),
    });
    expect(extractProfileOption(['-p', 'a', '-p', 'a'])).toMatchObject({ ok: true, profile: 'a' });
  });
});
