import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { toolContext } from '../../test/fixtures.js';
import { AgentError, TOOL_ERROR_MESSAGES } from '../errors.js';
import { defineTool, executeTool } from './define-tool.js';
import { createToolRegistry } from './tool-registry.js';

const echo = defineTool({
  name: 'echo',
  toolset: 'test',
  description: 'Echo a word',
  readOnly: true,
  parameters: v.object({ word: v.pipe(v.string(), v.minLength(2)), times: v.optional(v.number()) }),
  run: (args) => {
    if (args.word === 'boom') throw new Error('exploded');
    return { said: args.word.repeat(args.times ?? 1) };
  },
});

describe('defineTool', () => {
  it('generates the JSON Schema the model sees from the valibot schema', () => {
    expect(echo.jsonSchema).toEqual({
      type: 'object',
      properties: { word: { type: 'string', minLength: 2 }, times: { type: 'number' } },
      required: ['word'],
    });
    expect(echo.readOnly).toBe(true);
  });

  it('refuses a name the model API would reject', () => {
    expect(() => defineTool({ ...echo, name: 'bad name', run: () => '' })).toThrow(TypeError);
  });

  it('turns bad JSON, invalid arguments and thrown errors into {"error"} results', async () => {
    const context = await toolContext();
    expect(await executeTool(echo, '{"word":"hi","times":2}', context)).toEqual({
      ok: true,
      content: '{"said":"hihi"}',
    });
    const invalidJson = await executeTool(echo, '{"word":', context);
    expect(invalidJson.ok).toBe(false);
    expect(invalidJson.error?.startsWith('Invalid JSON in tool arguments: ')).toBe(true);
    expect(JSON.parse(invalidJson.content)).toEqual({ error: invalidJson.error });
    const invalid = await executeTool(echo, '{"word":"x"}', context);
    expect(invalid.error).toBe(
      TOOL_ERROR_MESSAGES.invalidArguments('word: Invalid length: Expected >=2 but received 1'),
    );
    const thrown = await executeTool(echo, '{"word":"boom"}', context);
    expect(thrown).toEqual({ ok: false, content: '{"error":"exploded"}', error: 'exploded' });
  });
});

describe('createToolRegistry', () => {
  it('refuses a name registered twice', () => {
    expect(() => createToolRegistry([echo, echo])).toThrow(AgentError);
    expect(() => createToolRegistry([echo, echo])).toThrow("tool 'echo' is registered twice");
  });
});
