import { delegateTaskTool } from '../delegation/delegate-task-tool.js';
import { patchTool } from './builtin/patch.js';
import { readFileTool } from './builtin/read-file.js';
import { searchFilesTool } from './builtin/search-files.js';
import { skillViewTool } from './builtin/skill-view.js';
import { terminalTool } from './builtin/terminal.js';
import { todoTool } from './builtin/todo.js';
import { writeFileTool } from './builtin/write-file.js';
import type { Tool } from './define-tool.js';

/** The built-in tools, in the order the model sees them. Registration is this explicit list. */
export const BUILTIN_TOOLS: readonly Tool[] = Object.freeze([
  readFileTool,
  writeFileTool,
  patchTool,
  searchFilesTool,
  terminalTool,
  skillViewTool,
  todoTool,
  delegateTaskTool,
]);
