import { open } from 'node:fs/promises';
import path from 'node:path';

export const DEFAULT_IDENTITY =
  'You are Hermes, a capable AI assistant. You work in the user’s workspace with the tools you are given: read before you edit, keep changes minimal, verify what you did, and say plainly what you could not do.';

/** Workspace instruction files read from the working directory, in this order. */
export const CONTEXT_FILE_NAMES = ['AGENTS.md', 'CLAUDE.md', '.cursorrules', '.hermes.md'] as const;
export const CONTEXT_FILE_MAX_CHARS = 20_000;
export const CONTEXT_FILES_TOTAL_MAX_CHARS = 50_000;
export const SOUL_FILE = 'SOUL.md';

async function readBounded(
  file: string,
  maxChars: number,
): Promise<{ text: string; truncated: boolean } | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return undefined;
    // Read at most 4 bytes per allowed character: a huge file never lands in memory whole.
    const buffer = Buffer.alloc(Math.min(stats.size, maxChars * 4));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    const truncated = text.length > maxChars || stats.size > buffer.length;
    return { text: text.slice(0, maxChars), truncated };
  } finally {
    await handle.close();
  }
}

export interface ContextFile {
  readonly name: string;
  readonly content: string;
  readonly truncated: boolean;
}

/** The workspace's context files, each capped, all together capped. */
export async function loadContextFiles(cwd: string): Promise<ContextFile[]> {
  const files: ContextFile[] = [];
  let budget = CONTEXT_FILES_TOTAL_MAX_CHARS;
  for (const name of CONTEXT_FILE_NAMES) {
    if (budget <= 0) break;
    const read = await readBounded(path.join(cwd, name), Math.min(CONTEXT_FILE_MAX_CHARS, budget));
    if (!read || read.text.trim() === '') continue;
    files.push({ name, content: read.text, truncated: read.truncated });
    budget -= read.text.length;
  }
  return files;
}

export interface SystemPromptOptions {
  readonly home: string;
  readonly cwd: string;
  /** Replaces `SOUL.md` / the default identity. */
  readonly identity?: string;
  /** Extra sections, appended in order (delegation puts the child's brief here). */
  readonly parts?: readonly string[];
  readonly skipContextFiles?: boolean;
}

/** Identity (`SOUL.md` or the default), the working directory, context files, then `parts`. */
export async function buildSystemPrompt(options: SystemPromptOptions): Promise<string> {
  const soul =
    options.identity === undefined
      ? await readBounded(path.join(options.home, SOUL_FILE), CONTEXT_FILE_MAX_CHARS)
      : undefined;
  const sections = [options.identity ?? (soul?.text.trim() || DEFAULT_IDENTITY)];
  sections.push(`Working directory: ${options.cwd}`);
  if (!options.skipContextFiles) {
    for (const file of await loadContextFiles(options.cwd)) {
      sections.push(
        `## ${file.name} (workspace instructions)\n\n${file.content}${file.truncated ? '\n\n[… truncated]' : ''}`,
      );
    }
  }
  for (const part of options.parts ?? []) if (part.trim() !== '') sections.push(part);
  return sections.join('\n\n');
}
