import { describe, expect, it } from 'vitest';
import { collectLoadedSkills } from './collect-loaded-skills.js';

function skillView(args: unknown) {
  return {
    role: 'assistant',
    content: '',
    tool_calls: [
      {
        id: 'call',
        type: 'function',
        function: {
          name: 'skill_view',
          arguments: typeof args === 'string' ? args : JSON.stringify(args),
        },
      },
    ],
  };
}

describe('collectLoadedSkills', () => {
  it('collects preload markers first, then skill_view loads, skipping file reads and duplicates', () => {
    const systemPrompt =
      'You start with the "release-notes" skill\n  preloaded. Also with the "tdd" skill preloaded.';
    const messages = [
      skillView({ name: 'api-design' }),
      skillView({ name: 'tdd' }),
      skillView({ name: 'api-design', file_path: 'references/errors.md' }),
      skillView({ name: 'only-a-file', file_path: 'x.md' }),
      skillView('{not json'),
      {
        role: 'user',
        content: '',
        tool_calls: [{ function: { name: 'skill_view', arguments: '{"name":"user-side"}' } }],
      },
      skillView({ name: '  security  ' }),
    ];
    expect(collectLoadedSkills(messages, { systemPrompt })).toEqual([
      'release-notes',
      'tdd',
      'api-design',
      'security',
    ]);
  });

  it('returns an empty list when no skill was loaded', () => {
    expect(collectLoadedSkills([{ role: 'user', content: 'hi' }])).toEqual([]);
    expect(collectLoadedSkills([], { systemPrompt: 'No skills here.' })).toEqual([]);
  });

  it('caps the list at 8 by default', () => {
    const messages = Array.from({ length: 20 }, (_, index) =>
      skillView({ name: `skill-${index}` }),
    );
    const skills = collectLoadedSkills(messages);
    expect(skills).toHaveLength(8);
    expect(skills.length).toBeLessThan(15);
    expect(skills[7]).toBe('skill-7');
    expect(collectLoadedSkills(messages, { limit: 3 })).toEqual(['skill-0', 'skill-1', 'skill-2']);
  });

  it('puts the caller’s preloaded names first and reads stored rows with toolCalls as JSON text', () => {
    const storedRow = {
      role: 'assistant',
      content: null,
      toolCalls: JSON.stringify([
        { function: { name: 'skill_view', arguments: '{"name":"from-store"}' } },
      ]),
    };
    expect(collectLoadedSkills([storedRow], { preloaded: ['pinned', ''] })).toEqual([
      'pinned',
      'from-store',
    ]);
  });

  it('ignores calls to other tools and malformed call entries', () => {
    const messages = [
      {
        role: 'assistant',
        content: 'working',
        tool_calls: [
          null,
          { function: null },
          { function: { name: 'read_file', arguments: '{"name":"nope"}' } },
          { function: { name: 'skill_view', arguments: '[1,2]' } },
          { function: { name: 'skill_view', arguments: 'null' } },
          { function: { name: 'skill_view', arguments: '{"name":42}' } },
          { function: { name: 'skill_view', arguments: { name: 'object-args' } } },
        ],
      },
      // A stored row whose tool calls are not readable JSON.
      { role: 'assistant', content: null, toolCalls: '{not json' },
      { role: 'assistant', content: null, toolCalls: '{"not":"a list"}' },
    ];
    expect(collectLoadedSkills(messages)).toEqual(['object-args']);
  });

  it('counts a skill_view with an empty or null file_path as loading the whole skill', () => {
    const messages = [
      skillView({ name: 'null-path', file_path: null }),
      skillView({ name: 'empty-path', file_path: '' }),
    ];
    expect(collectLoadedSkills(messages)).toEqual(['null-path', 'empty-path']);
  });
});
