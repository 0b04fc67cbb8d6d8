import { exampleImports } from './example-imports.js';
import type { FencedBlock } from './fenced-blocks.js';
import type { ParsedReadme } from './parse-readme.js';

export interface InstallCommand {
  readonly command: string;
  readonly line: number;
  /** Package names (versions and tags stripped). */
  readonly packages: readonly string[];
}

/** Fenced-block languages whose `npm install …` lines are the README's install lines. */
export const SHELL_LANGUAGES: ReadonlySet<string> = new Set([
  'sh',
  'bash',
  'shell',
  'console',
  'zsh',
]);

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

/** The `npm install` / `pnpm add` / `yarn add` / `bun add` commands of a shell block. */
export function parseInstallCommands(block: FencedBlock): InstallCommand[] {
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

/** Every package the README's install lines name. */
export function installedPackages(readme: ParsedReadme): Set<string> {
  return new Set(readme.installCommands.flatMap((command) => command.packages));
}

/**
 * What is wrong with a README's install lines and examples as a stranger would copy them: the
 * package itself is not installed, there is no example at all, an example imports a package no
 * install line names (with pnpm's strict node_modules it fails), or imports a relative path.
 */
export function installLineProblems(
  readme: ParsedReadme,
  { packageName, readmeName = 'README.md' }: { packageName?: string; readmeName?: string } = {},
): string[] {
  const problems: string[] = [];
  const installed = installedPackages(readme);
  if (packageName !== undefined && !installed.has(packageName)) {
    problems.push(
      `README: no install line names ${packageName} (a \`\`\`sh block with \`npm install ${packageName} …\`)`,
    );
  }
  if (readme.examples.length === 0) {
    problems.push(
      'README: no example — a ```js or ```ts block that the check runs (docs/releasing.md)',
    );
  }
  for (const example of readme.examples) {
    const label = `README example (${readmeName}:${example.line})`;
    const imports = exampleImports(example.code);
    for (const name of imports.packages) {
      if (!installed.has(name)) {
        problems.push(
          `${label} imports ${name}, which no install line names — with pnpm (strict node_modules) the example fails`,
        );
      }
    }
    for (const specifier of imports.relative) {
      problems.push(`${label} imports "${specifier}", which a reader's copy cannot resolve`);
    }
  }
  return problems;
}
