import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempHome } from '@hermes/testkit';
import { describe, expect, it } from 'vitest';
import {
  buildSystemPrompt,
  CONTEXT_FILE_MAX_CHARS,
  CONTEXT_FILES_TOTAL_MAX_CHARS,
  DEFAULT_IDENTITY,
  loadContextFiles,
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
});
