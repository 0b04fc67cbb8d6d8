import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ReadmeExample } from '@hermes/testkit/readme';
import { afterAll, describe, expect, it } from 'vitest';
import { materialiseExample, runExample } from './examples.js';

const folder = mkdtempSync(path.join(tmpdir(), 'pack-check-examples-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let line = 0;
async function run(example: Omit<ReadmeExample, 'line'>, options: { timeoutMs?: number } = {}) {
  line += 10;
  return runExample(materialiseExample(folder, '@hermes/demo', { ...example, line }), options);
}

describe('runExample', () => {
  it('passes an example that exits 0 and prints what the README shows', async () => {
    const problems = await run({
      language: 'ts',
      code: "const answer: number = 6 * 7;\nconsole.log('answer', answer);\nconsole.error('stderr is not compared');",
      expectedOutput: { text: 'answer 42', line: 99 },
    });
    expect(problems).toEqual([]);
  });

  it('fails an example whose output differs from the README, showing both', async () => {
    const [problem] = await run({
      language: 'js',
      code: "console.log('answer 41');",
      expectedOutput: { text: 'answer 42', line: 77 },
    });
    expect(problem).toContain('does not show');
    expect(problem).toContain('README.md:77');
    expect(problem).toMatch(/expected:\n\s+answer 42\n\s+printed:\n\s+answer 41/);
  });

  it('fails an example that prints when the README shows no output', async () => {
    const [problem] = await run({ language: 'js', code: "console.log('surprise');" });
    expect(problem).toContain('printed output but the README shows none');
    expect(problem).toContain('surprise');
  });

  it('fails an example that throws, with its stderr', async () => {
    const [problem] = await run({ language: 'js', code: 'rebuildSearchIndex();' });
    expect(problem).toContain('exited with code 1');
    expect(problem).toContain('ReferenceError: rebuildSearchIndex is not defined');
  });

  it('fails an example that never exits, and kills it', async () => {
    const started = performance.now();
    const [problem] = await run(
      { language: 'js', code: 'setInterval(() => {}, 1000);' },
      { timeoutMs: 1500 },
    );
    expect(problem).toContain('did not exit within 1.5 s');
    expect(performance.now() - started).toBeLessThan(15_000);
  });

  it("runs in a fresh home, without the caller's HERMES_HOME", async () => {
    process.env.HERMES_HOME = '/should/not/leak';
    try {
      const problems = await run({
        language: 'js',
        code: [
          "import { homedir } from 'node:os';",
          "import { readdirSync } from 'node:fs';",
          'console.log(process.env.HERMES_HOME ?? "unset", readdirSync(homedir()).length);',
        ].join('\n'),
        expectedOutput: { text: 'unset 0', line: 1 },
      });
      expect(problems).toEqual([]);
    } finally {
      delete process.env.HERMES_HOME;
    }
  });
});
