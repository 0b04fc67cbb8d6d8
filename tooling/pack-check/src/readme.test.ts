import { describe, expect, it } from 'vitest';
import { exampleImports, packageNameFromSpec, parseFencedBlocks, parseReadme } from './readme.js';

const readme = [
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
    const { examples } = parseReadme(readme);
    expect(examples.map((example) => [example.language, example.line])).toEqual([
      ['ts', 8],
      ['js', 17],
    ]);
    expect(examples[0]?.code).toBe(
      "import { greet } from '@hermes/demo';\nconsole.log(greet('Ada'));",
    );
  });

  it('pairs an example with the text block right after it, across one short lead-in line', () => {
    const { examples } = parseReadme(readme);
    expect(examples[0]?.expectedOutput).toEqual({ text: 'hello Ada', line: 13 });
    const leadIn = [
      '```js',
      "console.log('hi');",
      '```',
      '',
      'prints:',
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
    expect(parseReadme(readme).examples[1]?.expectedOutput).toBeUndefined(); // two prose lines
    const heading = ['```js', 'run();', '```', '## Output', '```text', 'x', '```'];
    expect(parseReadme(heading.join('\n')).examples[0]?.expectedOutput).toBeUndefined();
  });

  it('reads package names from npm, pnpm and yarn install lines, without versions or flags', () => {
    const { installCommands } = parseReadme(readme);
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
});

describe('exampleImports', () => {
  it('names the packages an example imports, statically, dynamically or with require', () => {
    const code = [
      "import { a } from '@hermes/demo/client';",
      "import type { B } from 'hono';",
      "import 'node:fs';",
      "import path from 'path';",
      "export * from '@scope/re-export';",
      "const lazy = await import('ws');",
      "const legacy = require('yaml');",
      "import local from './local.js';",
    ].join('\n');
    expect(exampleImports(code)).toEqual({
      packages: ['@hermes/demo', 'hono', '@scope/re-export', 'ws', 'yaml'],
      relative: ['./local.js'],
    });
  });

  it('strips versions from install specs, scoped or not', () => {
    expect(packageNameFromSpec('@hermes/demo@^0.1.0')).toBe('@hermes/demo');
    expect(packageNameFromSpec('hono@4')).toBe('hono');
    expect(packageNameFromSpec('ws')).toBe('ws');
  });
});
