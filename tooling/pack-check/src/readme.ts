import { isBuiltin } from 'node:module';
import ts from 'typescript';

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

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

export interface FencedBlock {
  /** First word of the info string, lower-cased ('' when none). */
  readonly language: string;
  readonly info: string;
  readonly content: string;
  /** 1-based README line of the opening fence; the block's first content line is `line + 1`. */
  readonly line: number;
  /** 1-based README line of the closing fence (the last line when the block is unterminated). */
  readonly endLine: number;
}

export interface ReadmeExample {
  readonly language: 'js' | 'ts';
  readonly code: string;
  readonly line: number;
  /** The following ```text block, when there is one: what the example prints on stdout. */
  readonly expectedOutput?: { readonly text: string; readonly line: number };
}

export interface InstallCommand {
  readonly command: string;
  readonly line: number;
  /** Package names (versions and tags stripped). */
  readonly packages: readonly string[];
}

export interface ParsedReadme {
  readonly examples: readonly ReadmeExample[];
  readonly installCommands: readonly InstallCommand[];
}

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/** CommonMark-style fenced code blocks (backticks or tildes, up to three spaces of indent). */
export function parseFencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: FencedBlock[] = [];
  let index = 0;
  while (index < lines.length) {
    const opening = FENCE.exec(lines[index] ?? '');
    const fence = opening?.[2];
    if (!opening || !fence || (fence.startsWith('`') && (opening[3] ?? '').includes('`'))) {
      index += 1;
      continue;
    }
    const indent = (opening[1] ?? '').length;
    const info = (opening[3] ?? '').trim();
    const body: string[] = [];
    let closed = -1;
    for (let cursor = index + 1; cursor < lines.length; cursor += 1) {
      const text = lines[cursor] ?? '';
      const closing = FENCE.exec(text);
      if (
        closing?.[2] &&
        closing[2][0] === fence[0] &&
        closing[2].length >= fence.length &&
        (closing[3] ?? '').trim() === ''
      ) {
        closed = cursor;
        break;
      }
      body.push(text.slice(Math.min(indent, text.length - text.trimStart().length)));
    }
    const end = closed === -1 ? lines.length - 1 : closed;
    blocks.push({
      language: (info.split(/\s+/)[0] ?? '').toLowerCase(),
      info,
      content: body.join('\n'),
      line: index + 1,
      endLine: end + 1,
    });
    index = end + 1;
  }
  return blocks;
}

const INSTALLERS: readonly RegExp[] = [
  /^npm\s+(?:install|i|add)\b(.*)$/,
  /^pnpm\s+(?:add|install|i)\b(.*)$/,
  /^yarn\s+add\b(.*)$/,
  /^bun\s+(?:add|install|i)\b(.*)$/,
];

/** `@scope/name@^1.2.0` → `@scope/name`; `name@latest` → `name`. */
export function packageNameFromSpec(spec: string): string {
  const at = spec.indexOf('@', spec.startsWith('@') ? 1 : 0);
  return at === -1 ? spec : spec.slice(0, at);
}

function parseInstallCommands(block: FencedBlock): InstallCommand[] {
  const commands: InstallCommand[] = [];
  block.content.split('\n').forEach((raw, offset) => {
    const line = raw.replace(/^\s*\$\s+/, '').trim();
    for (const part of line.split(/&&|;/)) {
      const command = part.trim();
      for (const installer of INSTALLERS) {
        const match = installer.exec(command);
        if (!match) continue;
        const packages = (match[1] ?? '')
          .split(/\s+/)
          .filter((word) => word !== '' && !word.startsWith('-') && !word.startsWith('#'))
          .map(packageNameFromSpec);
        if (packages.length > 0)
          commands.push({ command, line: block.line + 1 + offset, packages });
      }
    }
  });
  return commands;
}

/** One short line of prose such as `prints:` or `Output:` may stand between an example and its output. */
export const LEAD_IN_MAX_LENGTH = 80;

function isLeadIn(line: string): boolean {
  const text = line.trim();
  return text.length <= LEAD_IN_MAX_LENGTH && !text.startsWith('#') && !text.startsWith('|');
}

/**
 * The README conventions the package check runs (docs/releasing.md):
 * - every ```js / ```ts block (and the aliases in EXAMPLE_LANGUAGES) is a complete program;
 * - a ```text block right after an example (blank lines and at most one short lead-in line such
 *   as `prints:` between them) is its expected stdout;
 * - ```sh blocks with `npm install` / `pnpm add` / `yarn add` / `bun add` are the install lines.
 */
export function parseReadme(markdown: string): ParsedReadme {
  const blocks = parseFencedBlocks(markdown);
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const examples: ReadmeExample[] = [];
  const installCommands: InstallCommand[] = [];
  blocks.forEach((block, position) => {
    if (SHELL_LANGUAGES.has(block.language)) installCommands.push(...parseInstallCommands(block));
    const language = EXAMPLE_LANGUAGES[block.language];
    if (!language) return;
    const next = blocks[position + 1];
    const between = next
      ? lines.slice(block.endLine, next.line - 1).filter((text) => text.trim() !== '')
      : [];
    const leadIn = between.length === 0 || (between.length === 1 && isLeadIn(between[0] ?? ''));
    const adjacent = next !== undefined && next.language === OUTPUT_LANGUAGE && leadIn;
    examples.push({
      language,
      code: block.content,
      line: block.line,
      ...(adjacent && next ? { expectedOutput: { text: next.content, line: next.line } } : {}),
    });
  });
  return { examples, installCommands };
}

export interface ExampleImports {
  /** Bare package names the example imports (`node:` and other built-ins excluded). */
  readonly packages: readonly string[];
  /** Relative or absolute specifiers: a stranger's copy of the example cannot resolve them. */
  readonly relative: readonly string[];
}

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
export function packageNameFromSpecifier(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** Static imports, re-exports, dynamic `import()` and `require()` calls of an example. */
export function exampleImports(code: string): ExampleImports {
  const { importedFiles } = ts.preProcessFile(code, true, true);
  const packages = new Set<string>();
  const relative = new Set<string>();
  for (const { fileName } of importedFiles) {
    if (fileName.startsWith('.') || fileName.startsWith('/')) relative.add(fileName);
    else if (!isBuiltin(fileName)) packages.add(packageNameFromSpecifier(fileName));
  }
  return { packages: [...packages], relative: [...relative] };
}
