import { DEFAULT_SKILLS_LIMIT } from './constants.js';
import { isRecord } from './message-text.js';

export interface CollectLoadedSkillsOptions {
  /**
   * The primary agent's system prompt (or the part holding launch-time skills): every
   * `with the "<name>" skill … preloaded` in it counts as a loaded skill.
   */
  readonly systemPrompt?: string | undefined;
  /** Skills the caller already knows are loaded; listed first. */
  readonly preloaded?: readonly string[] | undefined;
  /** At most this many names (default 8). */
  readonly limit?: number | undefined;
}

const PRELOAD_MARKER = /with the "([^"]*)" skill\s+preloaded/g;

function toolCallsOf(message: Record<string, unknown>): readonly unknown[] {
  // OpenAI-format messages say `tool_calls`; rows read from @hermes/session-store say `toolCalls`,
  // possibly still as the stored JSON text.
  const calls = message.tool_calls ?? message.toolCalls;
  if (Array.isArray(calls)) return calls;
  if (typeof calls !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(calls);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

function skillViewName(call: unknown): string | undefined {
  if (!isRecord(call) || !isRecord(call.function) || call.function.name !== 'skill_view')
    return undefined;
  let args: unknown = call.function.arguments;
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return undefined;
    }
  }
  if (!isRecord(args)) return undefined;
  // Reading one reference file of a skill is not loading the skill.
  const filePath = args.file_path;
  if (filePath !== undefined && filePath !== null && filePath !== '') return undefined;
  return typeof args.name === 'string' ? args.name : undefined;
}

/**
 * The skills the primary agent worked under, so the reviewer holds the work to them: the caller's
 * `preloaded` names, then launch-time preloads named in the system prompt, then every whole-skill
 * `skill_view` an assistant message called (in order), trimmed, de-duplicated, at most `limit`.
 */
export function collectLoadedSkills(
  messages: readonly unknown[],
  options: CollectLoadedSkillsOptions = {},
): string[] {
  const candidates: string[] = [...(options.preloaded ?? [])];
  if (options.systemPrompt !== undefined)
    for (const match of options.systemPrompt.matchAll(PRELOAD_MARKER))
      candidates.push(match[1] ?? '');
  for (const message of messages) {
    if (!isRecord(message) || message.role !== 'assistant') continue;
    for (const call of toolCallsOf(message)) {
      const name = skillViewName(call);
      if (name !== undefined) candidates.push(name);
    }
  }
  const limit = options.limit ?? DEFAULT_SKILLS_LIMIT;
  const skills: string[] = [];
  for (const candidate of candidates) {
    const name = candidate.trim();
    if (name.length === 0 || skills.includes(name)) continue;
    if (skills.length >= limit) break;
    skills.push(name);
  }
  return skills;
}
