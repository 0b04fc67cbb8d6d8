import { readFileSync } from 'node:fs';
import { type FencedBlock, markdownLines, parseFencedBlocks } from './fenced-blocks.js';
import { type InstallCommand, parseInstallCommands, SHELL_LANGUAGES } from './install-lines.js';

/** Fenced-block languages that make a block a README example (it must run). */
export const EXAMPLE_LANGUAGES: Readonly<Record<string, 'js' | 'ts'>> = {
  js: 'js',
  javascript: 'js',
  mjs: 'js',
  ts: 'ts',
  typescript: 'ts',
  mts: 'ts',
};

/** The language of the block that shows an example's expected standard output. */
export const OUTPUT_LANGUAGE = 'text';

/** One short line of prose such as `prints:` or `Output:` may stand between an example and its output. */
export const LEAD_IN_MAX_LENGTH = 80;

export interface ReadmeExample {
  readonly language: 'js' | 'ts';
  readonly code: string;
  /** 1-based README line of the example's opening fence. */
  readonly line: number;
  /** The following ```text block, when there is one: what the example prints on stdout. */
  readonly expectedOutput?: { readonly text: string; readonly line: number };
}

export interface ParsedReadme {
  readonly examples: readonly ReadmeExample[];
  readonly installCommands: readonly InstallCommand[];
}

export interface ReadmeFile extends ParsedReadme {
  /** Absolute path of the README that was read. */
  readonly path: string;
}

function isLeadIn(line: string): boolean {
  const text = line.trim();
  return text.length <= LEAD_IN_MAX_LENGTH && !text.startsWith('#') && !text.startsWith('|');
}

function expectedOutputOf(
  lines: readonly string[],
  block: FencedBlock,
  next: FencedBlock | undefined,
): ReadmeExample['expectedOutput'] {
  if (next?.language !== OUTPUT_LANGUAGE) return undefined;
  const between = lines.slice(block.endLine, next.line - 1).filter((text) => text.trim() !== '');
  const leadIn = between.length === 0 || (between.length === 1 && isLeadIn(between[0] ?? ''));
  return leadIn ? { text: next.content, line: next.line } : undefined;
}

/**
 * The README conventions every README test and the package check run (docs/releasing.md):
 * - every ```js / ```ts block (and the aliases in EXAMPLE_LANGUAGES) is a complete program;
 * - a ```text block right after an example (blank lines and at most one short lead-in line such
 *   as `prints:` between them) is its expected stdout;
 * - ```sh blocks with `npm install` / `pnpm add` / `yarn add` / `bun add` are the install lines.
 */
export function parseReadme(markdown: string): ParsedReadme {
  const blocks = parseFencedBlocks(markdown);
  const lines = markdownLines(markdown);
  const examples: ReadmeExample[] = [];
  const installCommands: InstallCommand[] = [];
  blocks.forEach((block, position) => {
    if (SHELL_LANGUAGES.has(block.language)) installCommands.push(...parseInstallCommands(block));
    const language = EXAMPLE_LANGUAGES[block.language];
    if (!language) return;
    const expectedOutput = expectedOutputOf(lines, block, blocks[position + 1]);
    examples.push({
      language,
      code: block.content,
      line: block.line,
      ...(expectedOutput ? { expectedOutput } : {}),
    });
  });
  return { examples, installCommands };
}

/** Reads and parses a README (synchronously, so a test file can list its examples as tests). */
export function readReadmeExamples(readmePath: string): ReadmeFile {
  return { path: readmePath, ...parseReadme(readFileSync(readmePath, 'utf8')) };
}
