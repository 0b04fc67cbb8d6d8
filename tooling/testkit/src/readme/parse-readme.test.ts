import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseFencedBlocks } from './fenced-blocks.js';
import { parseReadme, readReadmeExamples } from './parse-readme.js';

const DEMO_README = [
  '# @hermes/demo', // 1
  '', // 2
  '```sh', // 3
  'npm install @hermes/demo hono@^4 --save', // 4
  '$ pnpm add @hono/node-server@latest && echo done', // 5
  '```', // 6
  '', // 7
  '```ts', // 8
  "import { greet } from '@hermes/demo';", // 9
  "console.log(greet('Ada'));", // 10
  '```', // 11
  '', // 12
  '```text', // 13
  'hello Ada', // 14
  '```', // 15
  '', // 16
  '```js', // 17
  "import { serve } from '@hono/node-server';", // 18
  '```', // 19
  '', // 20
  'Prose between blocks,', // 21
  'on two lines.', // 22
  '```text', // 23
  'not the output of the js example', // 24
  '```', // 25
  '', // 26
  '```json', // 27
  '{ "not": "an example" }', // 28
  '```', // 29
].join('\n');

describe('parseReadme', () => {
  it('takes every js and ts block as an example, with the README line of its fence', () => {
    const { examples } = parseReadme(DEMO_README);
    expect(examples.map((example) => [example.language, example.line])).toEqual([
      ['ts', 8],
      ['js', 17],
    ]);
    expect(examples[0]?.code).toBe(
      "import { greet } from '@hermes/demo';\nconsole.log(greet('Ada'));",
    );
  });

  it('takes the language aliases javascript, mjs, typescript and mts as examples too', () => {
    const aliases = ['javascript', 'mjs', 'typescript', 'mts', 'jsx', 'console'];
    const markdown = aliases.map((language) => `\`\`\`${language}\nrun();\n\`\`\``).join('\n\n');
    expect(parseReadme(markdown).examples.map((example) => example.language)).toEqual([
      'js',
      'js',
      'ts',
      'ts',
    ]);
  });

  it('pairs an example with the text block right after it, across one short lead-in line', () => {
    const { examples } = parseReadme(DEMO_README);
    expect(examples[0]?.expectedOutput).toEqual({ text: 'hello Ada', line: 13 });
    const leadIn = [
      '```js',
      "console.log('hi');",
      '```',
      '',
      'It prints:',
      '',
      '```text',
      'hi',
      '```',
    ];
    expect(parseReadme(leadIn.join('\n')).examples[0]?.expectedOutput).toEqual({
      text: 'hi',
      line: 7,
    });
  });

  it('does not take a text block behind a heading or a longer paragraph as the output', () => {
    expect(parseReadme(DEMO_README).examples[1]?.expectedOutput).toBeUndefined(); // two prose lines
    const heading = ['```js', 'run();', '```', '## Output', '```text', 'x', '```'];
    expect(parseReadme(heading.join('\n')).examples[0]?.expectedOutput).toBeUndefined();
    const long = ['```js', 'run();', '```', 'x'.repeat(81), '```text', 'x', '```'];
    expect(parseReadme(long.join('\n')).examples[0]?.expectedOutput).toBeUndefined();
  });

  it('does not take a console block as the output', () => {
    const console = ['```js', "console.log('hi');", '```', '', '```console', 'hi', '```'];
    expect(parseReadme(console.join('\n')).examples[0]?.expectedOutput).toBeUndefined();
  });

  it('reads package names from npm, pnpm and yarn install lines, without versions or flags', () => {
    const { installCommands } = parseReadme(DEMO_README);
    expect(installCommands.map((command) => [command.line, command.packages])).toEqual([
      [4, ['@hermes/demo', 'hono']],
      [5, ['@hono/node-server']],
    ]);
  });

  it('ignores fences inside a longer fence and keeps indented blocks', () => {
    const nested = [
      '````md',
      '```ts',
      'inside();',
      '```',
      '````',
      '',
      '  ```js',
      '  run();',
      '  ```',
    ];
    const blocks = parseFencedBlocks(nested.join('\n'));
    expect(blocks.map((block) => [block.language, block.content])).toEqual([
      ['md', '```ts\ninside();\n```'],
      ['js', 'run();'],
    ]);
    expect(parseReadme(nested.join('\n')).examples.map((example) => example.code)).toEqual([
      'run();',
    ]);
  });

  it('reads CRLF READMEs like LF ones', () => {
    expect(parseReadme(DEMO_README.replace(/\n/g, '\r\n'))).toEqual(parseReadme(DEMO_README));
  });
});

describe('readReadmeExamples', () => {
  it('reads and parses a README file, keeping its path', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'testkit-readme-'));
    try {
      const file = path.join(folder, 'README.md');
      writeFileSync(file, DEMO_README);
      expect(readReadmeExamples(file)).toEqual({ path: file, ...parseReadme(DEMO_README) });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
