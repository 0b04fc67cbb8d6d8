import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { spawnProcess } from '@hermes/testkit';

/** A runnable README example: its JavaScript, and the output the README says it prints. */
export interface ReadmeExample {
  readonly code: string;
  /** The ```text block that follows the example, if any. */
  readonly prints: string | undefined;
}

export interface ReadmeExamples {
  readonly examples: ReadmeExample[];
  /** Package names on the README's `npm install` lines. */
  readonly installed: Set<string>;
}

/** Reads the ```js examples of a README, each with the ```text block right after it. */
export async function readReadmeExamples(readmePath: string): Promise<ReadmeExamples> {
  const text = await readFile(readmePath, 'utf8');
  const blocks = [...text.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((match) => ({
    language: match[1] ?? '',
    body: match[2] ?? '',
  }));
  const examples: ReadmeExample[] = [];
  blocks.forEach((block, index) => {
    if (block.language !== 'js') return;
    const next = blocks[index + 1];
    examples.push({ code: block.body, prints: next?.language === 'text' ? next.body : undefined });
  });
  const installed = new Set<string>();
  for (const block of blocks) {
    for (const line of block.body.split('\n')) {
      const install = /^npm (?:install|i) (.+)$/.exec(line.trim());
      for (const name of install?.[1]?.split(/\s+/) ?? []) {
        if (!name.startsWith('-')) installed.add(name.replace(/(?<=.)@[^/]*$/, ''));
      }
    }
  }
  return { examples, installed };
}

/** The packages an example imports (bare specifiers, `node:` built-ins left out). */
export function importedPackages(code: string): string[] {
  const packages = new Set<string>();
  for (const match of code.matchAll(/\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'\s*\)/g)) {
    const specifier = match[1] ?? match[2] ?? '';
    if (specifier.startsWith('node:') || specifier.startsWith('.')) continue;
    const parts = specifier.split('/');
    packages.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? ''));
  }
  return [...packages];
}

/**
 * Runs an example as its own Node process from inside the package (so the package resolves by
 * its own name, against its sources), and returns how it ended. A process still running after
 * `timeoutMilliseconds` is killed: an example must exit by itself.
 */
export async function runReadmeExample(options: {
  readonly packageRoot: string;
  readonly code: string;
  readonly name: string;
  readonly timeoutMilliseconds: number;
}): Promise<{ exitCode: number | null; exitedByItself: boolean; stdout: string; stderr: string }> {
  const directory = path.join(options.packageRoot, 'test-results', 'readme-examples');
  await mkdir(directory, { recursive: true });
  const file = path.join(directory, `${options.name}.mjs`);
  await writeFile(file, options.code);
  try {
    const child = await spawnProcess({
      command: process.execPath,
      args: ['--conditions=@hermes/source', '--import', 'tsx', file],
      cwd: options.packageRoot,
    });
    const timedOut = Symbol('timed out');
    const ended = await Promise.race([
      child.exited,
      new Promise<typeof timedOut>((resolve) =>
        setTimeout(() => resolve(timedOut), options.timeoutMilliseconds),
      ),
    ]);
    const exit = ended === timedOut ? await child.stop() : ended;
    return {
      exitCode: exit.code,
      exitedByItself: ended !== timedOut,
      stdout: child.stdout(),
      stderr: child.stderr(),
    };
  } finally {
    await rm(file, { force: true });
  }
}
