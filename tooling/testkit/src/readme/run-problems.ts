import { compareOutput } from './compare-output.js';
import type { ReadmeExample } from './parse-readme.js';
import type { ReadmeRun } from './run-example.js';

export interface RunProblemOptions {
  /** How the README is named in messages (default `README.md`). */
  readonly readmeName?: string;
  /**
   * `ignored` (default, the convention in docs/releasing.md) or `empty`: the example must also
   * write nothing on stderr (a warning a stranger would see counts).
   */
  readonly stderr?: 'ignored' | 'empty';
}

const tail = (text: string, lines = 25) => {
  const all = text.trimEnd().split('\n');
  return (all.length > lines ? ['…', ...all.slice(-lines)] : all)
    .map((line) => `      ${line}`)
    .join('\n');
};

/**
 * What is wrong with a run of a README example: it did not exit by itself within its deadline,
 * exited with a failure, printed something other than the README's ```text block (`…` matches
 * anything within a line), or printed anything when the README shows no output. Empty when the
 * example does what its README says.
 */
export function readmeRunProblems(
  example: ReadmeExample,
  run: ReadmeRun,
  { readmeName = 'README.md', stderr = 'ignored' }: RunProblemOptions = {},
): string[] {
  const label = `README example (${readmeName}:${example.line})`;
  const stderrTail = run.stderr ? `\n    stderr:\n${tail(run.stderr)}` : '';
  if (run.timedOut) {
    return [
      `${label} did not exit within ${run.timeoutMs / 1000} s — something it opened (a server, socket or timer) keeps it alive; the example must close what it opens${stderrTail}`,
    ];
  }
  if (run.code !== 0) {
    const how = run.signal ? `was killed by ${run.signal}` : `exited with code ${run.code}`;
    return [
      `${label} ${how}${stderrTail}${run.stdout ? `\n    stdout:\n${tail(run.stdout)}` : ''}`,
    ];
  }
  const problems: string[] = [];
  if (stderr === 'empty' && run.stderr.trim() !== '') {
    problems.push(`${label} wrote to stderr:\n${tail(run.stderr)}`);
  }
  if (!example.expectedOutput) {
    if (run.stdout.trim() !== '') {
      problems.push(
        `${label} printed output but the README shows none — put a \`\`\`text block right after the example showing:\n${tail(run.stdout)}`,
      );
    }
    return problems;
  }
  const comparison = compareOutput(example.expectedOutput.text, run.stdout);
  if (!comparison.matches) {
    problems.push(
      `${label} printed output that ${readmeName}:${example.expectedOutput.line} does not show (\`…\` matches anything within a line)\n    expected:\n${tail(comparison.expected, 40)}\n    printed:\n${tail(comparison.actual, 40)}`,
    );
  }
  return problems;
}

/** Throws, with every problem readmeRunProblems finds, unless the run matches its README. */
export function expectReadmeOutput(
  example: ReadmeExample,
  run: ReadmeRun,
  options: RunProblemOptions = {},
): void {
  const problems = readmeRunProblems(example, run, options);
  if (problems.length > 0) throw new Error(problems.join('\n'));
}
