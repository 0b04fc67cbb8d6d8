import { statSync } from 'node:fs';
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

/**
 * A source file is trusted by its stat only once it was last changed this long before the
 * prompt was read: a same-size rewrite within one tick of the file system's clock (4 ms on
 * Linux, 2 s on FAT) leaves the stat unchanged, so a file changed that recently is read again.
 */
export const SYSTEM_PROMPT_RACY_WINDOW_MS = 2_000;
const MAX_CACHED_PROMPTS = 8;

/** What identifies one file's content without reading it (`-` when absent). */
function fileStamp(file: string): { stamp: string; changedMs: number } {
  const stats = statSync(file, { bigint: true, throwIfNoEntry: false });
  if (!stats) return { stamp: '-', changedMs: 0 };
  return {
    stamp: `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}:${stats.isFile() ? 'f' : 'o'}`,
    changedMs: Math.max(Number(stats.mtimeMs), Number(stats.ctimeMs)),
  };
}

/** The files `buildSystemPrompt` reads for these options. */
export function systemPromptSources(options: SystemPromptOptions): string[] {
  const files = options.identity === undefined ? [path.join(options.home, SOUL_FILE)] : [];
  if (!options.skipContextFiles)
    for (const name of CONTEXT_FILE_NAMES) files.push(path.join(options.cwd, name));
  return files;
}

/**
 * `buildSystemPrompt` that keeps what it built: while every source file (`SOUL.md`, the context
 * files — present or absent) has the same device, inode, size, change and modification times,
 * and none was changed within `SYSTEM_PROMPT_RACY_WINDOW_MS` of the read, the prompt is reused
 * at the cost of one `stat` per file instead of an open and a read each. An edited, created,
 * removed or replaced file is read again on the next call.
 */
export class SystemPromptCache {
  readonly #entries = new Map<string, { stamps: string[]; readAtMs: number; prompt: string }>();
  readonly #now: () => number;

  /** `now`: the wall clock (epoch ms) the racy window is measured on (default `Date.now`). */
  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  async build(options: SystemPromptOptions): Promise<string> {
    const key = JSON.stringify([
      options.home,
      options.cwd,
      options.identity ?? null,
      options.parts ?? [],
      options.skipContextFiles === true,
    ]);
    const stamps: string[] = [];
    let newestChangeMs = 0;
    for (const file of systemPromptSources(options)) {
      const { stamp, changedMs } = fileStamp(file);
      stamps.push(stamp);
      if (changedMs > newestChangeMs) newestChangeMs = changedMs;
    }
    const cached = this.#entries.get(key);
    if (
      cached &&
      newestChangeMs < cached.readAtMs - SYSTEM_PROMPT_RACY_WINDOW_MS &&
      cached.stamps.every((stamp, index) => stamp === stamps[index])
    )
      return cached.prompt;
    // Stamped before reading: a change during the read shows as a new stamp next time.
    const readAtMs = this.#now();
    const prompt = await buildSystemPrompt(options);
    this.#entries.delete(key);
    this.#entries.set(key, { stamps, readAtMs, prompt });
    if (this.#entries.size > MAX_CACHED_PROMPTS) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return prompt;
  }
}
