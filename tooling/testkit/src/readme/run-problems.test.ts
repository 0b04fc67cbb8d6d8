import { describe, expect, it } from 'vitest';
import type { ReadmeExample } from './parse-readme.js';
import type { ReadmeRun } from './run-example.js';
import { expectReadmeOutput, readmeRunProblems } from './run-problems.js';

const run = (fields: Partial<ReadmeRun>): ReadmeRun => ({
  code: 0,
  signal: null,
  timedOut: false,
  timeoutMs: 30_000,
  stdout: '',
  stderr: '',
  ...fields,
});

const shows = (text: string): ReadmeExample => ({
  language: 'js',
  code: 'main();',
  line: 20,
  expectedOutput: { text, line: 77 },
});
const silent: ReadmeExample = { language: 'ts', code: 'main();', line: 40 };

describe('readmeRunProblems', () => {
  it('passes a run that exits 0 and prints what the README shows, stderr aside', () => {
    expect(
      readmeRunProblems(shows('answer 42'), run({ stdout: 'answer 42\n', stderr: 'x' })),
    ).toEqual([]);
    expect(readmeRunProblems(shows('id …'), run({ stdout: 'id 20260101_abc\n' }))).toEqual([]);
    expect(readmeRunProblems(silent, run({}))).toEqual([]);
  });

  it('fails output that differs from the README, showing both and where the README shows it', () => {
    const [problem] = readmeRunProblems(shows('answer 42'), run({ stdout: 'answer 41\n' }));
    expect(problem).toContain(
      'README example (README.md:20) printed output that README.md:77 does not show',
    );
    expect(problem).toMatch(/expected:\n\s+answer 42\n\s+printed:\n\s+answer 41/);
  });

  it('fails an example that prints when the README shows no output', () => {
    const [problem] = readmeRunProblems(silent, run({ stdout: 'surprise\n' }));
    expect(problem).toContain('printed output but the README shows none');
    expect(problem).toContain('surprise');
  });

  it('fails an example that exits with a failure or a signal, with its stderr', () => {
    const [failed] = readmeRunProblems(silent, run({ code: 1, stderr: 'ReferenceError: x' }));
    expect(failed).toContain('README example (README.md:40) exited with code 1');
    expect(failed).toContain('ReferenceError: x');
    const [killed] = readmeRunProblems(silent, run({ code: null, signal: 'SIGKILL' }));
    expect(killed).toContain('was killed by SIGKILL');
  });

  it('fails an example that did not exit by its deadline', () => {
    const [problem] = readmeRunProblems(
      silent,
      run({ timedOut: true, timeoutMs: 1500, code: null }),
    );
    expect(problem).toContain('did not exit within 1.5 s');
  });

  it('fails anything on stderr when asked to, and names the README it reads', () => {
    const problems = readmeRunProblems(
      shows('ok'),
      run({ stdout: 'ok\n', stderr: 'ExperimentalWarning: …' }),
      { stderr: 'empty', readmeName: '../other/README.md' },
    );
    expect(problems).toEqual([
      'README example (../other/README.md:20) wrote to stderr:\n      ExperimentalWarning: …',
    ]);
  });
});

describe('expectReadmeOutput', () => {
  it('throws every problem, and nothing when the run matches', () => {
    expect(() => expectReadmeOutput(shows('a'), run({ stdout: 'a\n' }))).not.toThrow();
    expect(() => expectReadmeOutput(shows('a'), run({ stdout: 'b\n' }))).toThrow(
      /printed output that README.md:77 does not show/,
    );
  });
});
