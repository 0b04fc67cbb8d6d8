import { MAX_TASK_IMAGES, MIN_BATCH_GOAL_CHARS } from './delegation-limits.js';
import { DELEGATION_ERROR_MESSAGES as MESSAGES } from './delegation-messages.js';

/** One subagent's assignment after validation. */
export interface DelegationTask {
  readonly goal: string;
  readonly context: string;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly images?: readonly string[];
  /** With `delegation.independent_completions`, tasks of one group complete together. */
  readonly group?: string;
}

export type NormalizedTasks = { readonly tasks: DelegationTask[] } | { readonly error: string };

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  return typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const PLACEHOLDER_GOAL = /^(todo|tbd|task\s*\d*|\.\.\.|…)$/i;
const TEMPLATE_MARKER =
  /<[a-z][a-z0-9]*(?:[_ -][a-z0-9]+)+>|\{[a-z][a-z0-9]*(?:[_ -][a-z0-9]+)+\}/i;

/** The batch-only quality gate: placeholder goals, unexpanded template markers, too-short goals. */
function qualityError(index: number, goal: string, batch: boolean): string | undefined {
  if (!batch) return undefined;
  const trimmed = goal.trim();
  if (PLACEHOLDER_GOAL.test(trimmed.replace(/[.:!]+$/, '')))
    return MESSAGES.placeholderGoal(index, trimmed);
  const marker = TEMPLATE_MARKER.exec(trimmed);
  if (marker) return MESSAGES.templateGoal(index, marker[0]);
  if (trimmed.length < MIN_BATCH_GOAL_CHARS) return MESSAGES.shortGoal(index, trimmed);
  return undefined;
}

function coerceOutputSchema(
  index: number,
  raw: unknown,
): { schema?: Record<string, unknown>; error?: string } {
  if (raw === undefined || raw === null) return {};
  let value = raw;
  if (typeof value === 'string') {
    if (value.trim() === '') return {};
    try {
      value = JSON.parse(value);
    } catch (error) {
      return {
        error: MESSAGES.outputSchemaInvalid(index, `not JSON (${(error as Error).message})`),
      };
    }
  }
  if (!isRecord(value))
    return {
      error: MESSAGES.outputSchemaInvalid(index, `expected an object, got ${typeName(value)}`),
    };
  const type = value.type;
  if (
    type !== undefined &&
    typeof type !== 'string' &&
    !(Array.isArray(type) && type.every((entry) => typeof entry === 'string'))
  )
    return {
      error: MESSAGES.outputSchemaInvalid(index, "'type' must be a string or a list of strings"),
    };
  return { schema: value };
}

function coerceImages(index: number, raw: unknown): { images?: string[]; error?: string } {
  if (raw === undefined || raw === null) return {};
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list)) return { error: MESSAGES.imagesInvalid(index) };
  if (!list.every((entry) => typeof entry === 'string' && entry.trim() !== ''))
    return { error: MESSAGES.imagesInvalid(index) };
  if (list.length > MAX_TASK_IMAGES) return { error: MESSAGES.tooManyImages(index, list.length) };
  return list.length === 0 ? {} : { images: list.map((entry) => (entry as string).trim()) };
}

/**
 * Steps 8–9 of the reference's validation, in its order: `tasks` as JSON text is parsed, a legacy
 * top-level `goal` becomes one task, the count is checked against `max_concurrent_children`, then
 * each task's shape, the batch quality gate, output schemas and images.
 */
export function normalizeTasks(
  args: Readonly<Record<string, unknown>>,
  maxConcurrentChildren: number,
): NormalizedTasks {
  let raw: unknown = args.tasks;
  if (typeof raw === 'string') {
    if (raw.trim() === '') raw = undefined;
    else {
      try {
        raw = JSON.parse(raw);
      } catch (error) {
        return { error: MESSAGES.tasksNotJson((error as Error).message) };
      }
    }
  }
  if (raw !== undefined && raw !== null && !Array.isArray(raw))
    return { error: MESSAGES.tasksNotArray(typeName(raw)) };
  let list: unknown[] = Array.isArray(raw) ? raw : [];
  if (list.length === 0 && typeof args.goal === 'string' && args.goal.trim() !== '') {
    list = [
      {
        goal: args.goal,
        context: args.context,
        output_schema: args.output_schema,
        images: args.images,
      },
    ];
  }
  if (list.length > maxConcurrentChildren)
    return { error: MESSAGES.tooManyTasks(list.length, maxConcurrentChildren) };
  if (list.length === 0) return { error: MESSAGES.noTasks };
  const tasks: DelegationTask[] = [];
  const batch = list.length >= 2;
  for (const [index, entry] of list.entries()) {
    if (!isRecord(entry)) return { error: MESSAGES.taskNotObject(index, typeName(entry)) };
    const goal = typeof entry.goal === 'string' ? entry.goal.trim() : '';
    if (goal === '') return { error: MESSAGES.taskMissingGoal(index) };
    const quality = qualityError(index, goal, batch);
    if (quality) return { error: quality };
    const context = typeof entry.context === 'string' ? entry.context : '';
    const group =
      typeof entry.group === 'string' && entry.group.trim() !== '' ? entry.group.trim() : undefined;
    tasks.push({ goal, context, ...(group ? { group } : {}) });
  }
  for (const [index, entry] of (list as Record<string, unknown>[]).entries()) {
    const schema = coerceOutputSchema(index, entry.output_schema);
    if (schema.error) return { error: schema.error };
    const images = coerceImages(index, entry.images);
    if (images.error) return { error: images.error };
    const task = tasks[index] as DelegationTask;
    tasks[index] = {
      ...task,
      ...(schema.schema ? { outputSchema: schema.schema } : {}),
      ...(images.images ? { images: images.images } : {}),
    };
  }
  return { tasks };
}
