import type { HermesConfig } from '@hermes/config';
import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { TOOL_ERROR_MESSAGES } from '../errors.js';
import type { ToolContext } from './tool-context.js';

const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export interface ToolSpec<TSchema extends v.GenericSchema> {
  /** The name the model calls (`^[a-zA-Z0-9_-]{1,64}$`). */
  readonly name: string;
  readonly description: string;
  /** The toolset that switches it on or off (`file`, `terminal`, `delegation`, …). */
  readonly toolset: string;
  /** Arguments schema: validated before `run`, and turned into the JSON Schema the model sees. */
  readonly parameters: TSchema;
  /** Read-only calls of one model reply may run concurrently. Default false. */
  readonly readOnly?: boolean;
  /** Returns a string (sent as is) or a JSON-serialisable value. Throwing reports `{"error": …}`. */
  run(args: v.InferOutput<TSchema>, context: ToolContext): unknown;
  /**
   * A definition that depends on the agent (its config, its depth), built each time an agent is
   * created: replaces `description` and the JSON Schema made from `parameters`.
   */
  readonly definition?: (agent: ToolDefinitionContext) => ToolDefinition;
}

/** What a dynamic tool definition may look at. */
export interface ToolDefinitionContext {
  readonly config: HermesConfig;
  readonly depth: number;
  readonly platform: string;
}

export interface ToolDefinition {
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly toolset: string;
  readonly readOnly: boolean;
  readonly parameters: v.GenericSchema;
  /** The JSON Schema sent to the model. */
  readonly jsonSchema: Readonly<Record<string, unknown>>;
  run(args: unknown, context: ToolContext): unknown;
  readonly definition?: (agent: ToolDefinitionContext) => ToolDefinition;
}

/** The result of one call as the model will read it. */
export interface ToolOutcome {
  readonly ok: boolean;
  /** Sent as the tool message content. */
  readonly content: string;
  /** The error text when `ok` is false. */
  readonly error?: string;
}

/** Declares a tool. Registration is explicit: pass it in `createAgent({ tools })`. */
export function defineTool<TSchema extends v.GenericSchema>(spec: ToolSpec<TSchema>): Tool {
  if (!TOOL_NAME_PATTERN.test(spec.name))
    throw new TypeError(`tool name '${spec.name}' must match ${TOOL_NAME_PATTERN}`);
  const schema = toJsonSchema(spec.parameters, { errorMode: 'ignore' }) as Record<string, unknown>;
  const { $schema: _dialect, ...jsonSchema } = schema;
  return Object.freeze({
    name: spec.name,
    description: spec.description,
    toolset: spec.toolset,
    readOnly: spec.readOnly ?? false,
    parameters: spec.parameters,
    jsonSchema: Object.freeze(jsonSchema),
    run: spec.run as Tool['run'],
    ...(spec.definition ? { definition: spec.definition } : {}),
  });
}

export function errorContent(message: string): string {
  return JSON.stringify({ error: message });
}

function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .map((issue) => {
      const where = v.getDotPath(issue);
      return where ? `${where}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/**
 * Parses, validates and runs one call. Nothing escapes: bad JSON, invalid arguments and thrown
 * errors all become a `{"error": "…"}` result the model can read and correct.
 */
export async function executeTool(
  tool: Tool,
  rawArguments: string,
  context: ToolContext,
): Promise<ToolOutcome> {
  const fail = (error: string): ToolOutcome => ({ ok: false, content: errorContent(error), error });
  let parsed: unknown;
  try {
    parsed = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch (error) {
    return fail(TOOL_ERROR_MESSAGES.invalidJson((error as Error).message));
  }
  const validated = v.safeParse(tool.parameters, parsed);
  if (!validated.success)
    return fail(TOOL_ERROR_MESSAGES.invalidArguments(describeIssues(validated.issues)));
  try {
    const result = await tool.run(validated.output, context);
    if (context.signal.aborted) return fail(TOOL_ERROR_MESSAGES.interrupted);
    const content = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    return { ok: true, content };
  } catch (error) {
    if (context.signal.aborted) return fail(TOOL_ERROR_MESSAGES.interrupted);
    return fail(error instanceof Error ? error.message : String(error));
  }
}
