import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { toolContext } from '../../../test/fixtures.js';
import { executeTool } from '../define-tool.js';
import { skillViewTool } from './skill-view.js';
import { todoTool } from './todo.js';

describe('skill_view', () => {
  it('loads SKILL.md by name (also inside a category) and reads supporting files without loading', async () => {
    const context = await toolContext();
    const skill = path.join(context.home, 'skills', 'devops', 'deploy');
    await mkdir(path.join(skill, 'refs'), { recursive: true });
    await writeFile(path.join(skill, 'SKILL.md'), '# Deploy\nSteps.');
    await writeFile(path.join(skill, 'refs', 'notes.md'), 'extra');
    const loaded = JSON.parse(
      (await executeTool(skillViewTool, '{"name":"deploy"}', context)).content,
    );
    expect(loaded).toMatchObject({ name: 'deploy', loaded: true, content: '# Deploy\nSteps.' });
    const file = JSON.parse(
      (await executeTool(skillViewTool, '{"name":"deploy","file_path":"refs/notes.md"}', context))
        .content,
    );
    expect(file).toEqual({ name: 'deploy', file_path: 'refs/notes.md', content: 'extra' });
    const outside = await executeTool(
      skillViewTool,
      '{"name":"deploy","file_path":"../../../../config.yaml"}',
      context,
    );
    expect(outside.error).toBe("file_path must stay inside the skill folder of 'deploy'");
    const unknown = await executeTool(skillViewTool, '{"name":"nope"}', context);
    expect(unknown.error).toBe(
      `Skill 'nope' not found in ${path.join(context.home, 'skills')}; available: deploy`,
    );
    const traversal = await executeTool(skillViewTool, '{"name":"../x"}', context);
    expect(traversal.ok).toBe(false);
  });
});

describe('todo', () => {
  it('replaces the list, merges by id, and reports counts', async () => {
    const context = await toolContext();
    await executeTool(
      todoTool,
      JSON.stringify({
        todos: [
          { id: '1', content: 'read', status: 'completed' },
          { id: '2', content: 'write', status: 'pending' },
        ],
      }),
      context,
    );
    const merged = JSON.parse(
      (
        await executeTool(
          todoTool,
          JSON.stringify({
            merge: true,
            todos: [
              { id: '2', content: 'write', status: 'in_progress' },
              { id: '3', content: 'ship', status: 'pending' },
            ],
          }),
          context,
        )
      ).content,
    );
    expect(
      merged.todos.map((item: { id: string; status: string }) => `${item.id}:${item.status}`),
    ).toEqual(['1:completed', '2:in_progress', '3:pending']);
    expect(merged.summary).toEqual({
      total: 3,
      pending: 1,
      in_progress: 1,
      completed: 1,
      cancelled: 0,
    });
    const read = JSON.parse((await executeTool(todoTool, '{}', context)).content);
    expect(read.todos).toHaveLength(3);
  });
});
