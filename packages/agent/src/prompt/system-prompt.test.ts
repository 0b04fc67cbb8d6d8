import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  buildSystemPrompt,
  CONTEXT_FILE_MAX_CHARS,
  CONTEXT_FILES_TOTAL_MAX_CHARS,
  DEFAULT_IDENTITY,
  loadContextFiles,
  SYSTEM_PROMPT_RACY_WINDOW_MS,
  SystemPromptCache,
} from './system-prompt.js';

describe('system prompt', () => {
  it('reads the context files in order, each and all together bounded', async () => {
    const cwd = (await tempHome()).path;
    await writeFile(path.join(cwd, '.hermes.md'), 'hermes notes');
    await writeFile(path.join(cwd, 'AGENTS.md'), 'a'.repeat(CONTEXT_FILE_MAX_CHARS + 500));
    await writeFile(path.join(cwd, 'CLAUDE.md'), 'c'.repeat(CONTEXT_FILE_MAX_CHARS));
    await writeFile(path.join(cwd, '.cursorrules'), 'r'.repeat(CONTEXT_FILE_MAX_CHARS));
    const files = await loadContextFiles(cwd);
    expect(files.map((file) => [file.name, file.content.length, file.truncated])).toEqual([
      ['AGENTS.md', CONTEXT_FILE_MAX_CHARS, true],
      ['CLAUDE.md', CONTEXT_FILE_MAX_CHARS, false],
      ['.cursorrules', CONTEXT_FILES_TOTAL_MAX_CHARS - 2 * CONTEXT_FILE_MAX_CHARS, true],
    ]);
  });

  it('uses the default identity without SOUL.md and can skip context files', async () => {
    const dir = (await tempHome()).path;
    await writeFile(path.join(dir, 'AGENTS.md'), 'rules');
    const prompt = await buildSystemPrompt({ home: dir, cwd: dir, skipContextFiles: true });
    expect(prompt).toBe(`${DEFAULT_IDENTITY}\n\nWorking directory: ${dir}`);
  });

  // The clock runs ahead of the files' timestamps, so the cache trusts a file's stat (outside
  // the racy window) and only the stat comparison can notice a change.
  it('reuses a built prompt only while every source file has the same stat', async () => {
    const dir = (await tempHome()).path;
    const clock = Date.now() + 10 * SYSTEM_PROMPT_RACY_WINDOW_MS;
    const cache = new SystemPromptCache({ now: () => clock });
    const options = { home: dir, cwd: dir };
    await writeFile(path.join(dir, 'AGENTS.md'), 'Use tabs.');
    expect(await cache.build(options)).toContain('Use tabs.');
    // Same size, new content: a new ctime/mtime.
    await writeFile(path.join(dir, 'AGENTS.md'), 'Use tab!!');
    expect(await cache.build(options)).toContain('Use tab!!');
    await writeFile(path.join(dir, 'SOUL.md'), 'You are Ada.');
    expect(await cache.build(options)).toMatch(/^You are Ada\./);
    await rm(path.join(dir, 'AGENTS.md'));
    const without = await cache.build(options);
    expect(without).not.toContain('AGENTS.md');
    expect(without).toBe(await buildSystemPrompt(options));
    await writeFile(path.join(dir, '.hermes.md'), 'notes');
    expect(await cache.build(options)).toBe(await buildSystemPrompt(options));
    // Another working directory is its own entry.
    const other = (await tempHome()).path;
    expect(await cache.build({ home: dir, cwd: other })).toContain(`Working directory: ${other}`);
  });
});
