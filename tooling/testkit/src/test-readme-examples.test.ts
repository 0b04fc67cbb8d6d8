import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testReadmeExamples } from './test-readme-examples.js';

const fixture = new URL('../test/fixtures/readme-demo/', import.meta.url);

// The examples print "no HERMES_HOME": the caller's must not reach them.
beforeAll(() => {
  process.env.HERMES_HOME = '/must/not/reach/the/example';
});
afterAll(() => {
  delete process.env.HERMES_HOME;
});

// Registers the fixture's README tests here: an install-line test, an examples test and one test
// per example, each run against the fixture's sources in a fresh home.
const readme = testReadmeExamples({ packageRoot: fixture });

describe('testReadmeExamples', () => {
  it('returns the README it registered tests for, every example in it', () => {
    expect(path.basename(readme.path)).toBe('README.md');
    expect(readme.examples.map((example) => [example.language, example.line])).toEqual([
      ['ts', 9],
      ['js', 27],
    ]);
  });
});

// Only the examples `select` picks are registered (here the TypeScript one), under the name given.
testReadmeExamples({
  packageRoot: fixture,
  readme: '../readme-demo/README.md',
  select: (example) => example.language === 'ts',
});
