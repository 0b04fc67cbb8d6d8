import * as v from 'valibot';
import { defineTool } from '../define-tool.js';

export const TODO_STATUSES = ['pending', 'in_progress', 'completed', 'cancelled'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

export interface TodoItem {
  readonly id: string;
  readonly content: string;
  readonly status: TodoStatus;
}

const STATE_KEY = 'todo.items';

const itemSchema = v.object({
  id: v.pipe(v.string(), v.minLength(1)),
  content: v.pipe(v.string(), v.minLength(1)),
  status: v.picklist(TODO_STATUSES),
});

export const todoTool = defineTool({
  name: 'todo',
  toolset: 'todo',
  description:
    'Keep a task list for this conversation. Without todos it returns the list. With todos it replaces the list, or with merge=true updates items by id and appends new ones.',
  parameters: v.object({
    todos: v.optional(v.array(itemSchema)),
    merge: v.optional(v.boolean()),
  }),
  run(args, context) {
    let items = (context.sessionState.get(STATE_KEY) as TodoItem[] | undefined) ?? [];
    if (args.todos) {
      if (args.merge) {
        const next = [...items];
        for (const update of args.todos) {
          const index = next.findIndex((item) => item.id === update.id);
          if (index === -1) next.push(update);
          else next[index] = update;
        }
        items = next;
      } else items = [...args.todos];
      context.sessionState.set(STATE_KEY, items);
    }
    const counts = Object.fromEntries(
      TODO_STATUSES.map((status) => [
        status,
        items.filter((item) => item.status === status).length,
      ]),
    );
    return { todos: items, summary: { total: items.length, ...counts } };
  },
});
