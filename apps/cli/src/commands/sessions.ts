import { writeFile } from 'node:fs/promises';
import {
  classifyMessage,
  type MessageRecord,
  readAllMessages,
  type SessionListItem,
  type SessionListPage,
  type SessionRecord,
  SessionStoreError,
  sanitizeTitle,
} from '@hermes/session-store';
import type { CommandContext, CommandOptions, Positional } from '../context.js';
import { textArg } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { count, formatAge, formatTime, oneLine, printable } from '../output/format.js';
import { confirm } from '../prompt.js';
import { resolveSession, sessionNotFound, sessionReference, withExistingStore } from '../store.js';

function sessionJson(session: SessionRecord | SessionListItem) {
  return {
    id: session.id,
    title: session.title,
    source: session.source,
    model: session.model,
    cwd: session.cwd,
    started_at: session.startedAt,
    last_active: 'lastActive' in session ? session.lastActive : session.lastActivityAt,
    ended_at: session.endedAt,
    end_reason: session.endReason,
    message_count: session.messageCount,
    tool_call_count: session.toolCallCount,
    input_tokens: session.inputTokens,
    output_tokens: session.outputTokens,
    archived: session.archived === 1,
    hidden: session.hidden === 1,
    pinned: session.pinned === 1,
    parent_session_id: session.parentSessionId,
    lineage_root_id: session.lineageRootId,
    ...('preview' in session ? { preview: session.preview } : {}),
  };
}

function messageJson(message: MessageRecord) {
  let toolCalls: unknown = null;
  if (message.toolCalls) {
    try {
      toolCalls = JSON.parse(message.toolCalls) as unknown;
    } catch {
      toolCalls = message.toolCalls;
    }
  }
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    tool_calls: toolCalls,
    tool_call_id: message.toolCallId,
    tool_name: message.toolName,
    reasoning: message.reasoning,
    timestamp: message.timestamp,
    display_kind: message.displayKind,
  };
}

/** Without a `state.db` no session matches anything (a blank reference is still a usage error). */
function noSession(args: Positional): never {
  throw sessionNotFound(sessionReference(textArg(args, 0)));
}

export async function sessionsList(
  context: CommandContext,
  _args: Positional,
  options: CommandOptions,
): Promise<number> {
  const limit = typeof options.limit === 'number' ? options.limit : 20;
  const page = await withExistingStore(
    context.home,
    async (store) =>
      store.listSessionsRich({
        limit,
        offset: typeof options.offset === 'number' ? options.offset : 0,
        includeTotal: true,
        ...(options.archived === true ? { archivedOnly: true } : {}),
        ...(options.all === true ? { includeArchived: true, includeHidden: true } : {}),
        ...(typeof options.source === 'string' ? { source: options.source } : {}),
        ...(typeof options.search === 'string' ? { searchQuery: options.search } : {}),
      }),
    (): SessionListPage => ({ sessions: [], total: 0, hasMore: false, nextCursor: null }),
  );
  const { output } = context;
  if (output.json) {
    output.printJson({
      sessions: page.sessions.map(sessionJson),
      total: page.total,
      has_more: page.hasMore,
    });
    return EXIT.ok;
  }
  if (page.sessions.length === 0) {
    const offset = typeof options.offset === 'number' ? options.offset : 0;
    const filtered = typeof options.source === 'string' || typeof options.search === 'string';
    const elsewhere = options.all === true ? '' : ' (archived and hidden ones: --all)';
    output.note(
      offset > 0 && (page.total ?? 0) > 0
        ? `No sessions past --offset ${offset} (${page.total} in all).`
        : filtered
          ? `No sessions match.${elsewhere}`
          : options.all === true || options.archived === true
            ? 'No sessions.'
            : `No sessions yet. Start one with: hermes chat${elsewhere}`,
    );
    return EXIT.ok;
  }
  const styles = output.styles;
  output.table(
    [
      { header: 'ID', value: (row: SessionListItem) => row.id, style: (text) => styles.cyan(text) },
      // An untitled session shows `-` here and its first message under PREVIEW: in a pipe, where
      // nothing is dimmed, a preview must never pass for a title.
      {
        header: 'TITLE',
        value: (row) => row.title ?? '-',
        flexible: true,
        style: (text, row) => (row.title ? text : styles.dim(text)),
      },
      { header: 'SOURCE', value: (row) => row.source },
      { header: 'MSGS', value: (row) => String(row.messageCount), align: 'right' },
      { header: 'ACTIVE', value: (row) => formatAge(row.lastActive) },
      {
        header: 'FLAGS',
        value: (row) =>
          [
            row.pinned ? 'pinned' : '',
            row.archived ? 'archived' : '',
            row.hidden ? 'hidden' : '',
            row.endedAt ? 'ended' : '',
          ]
            .filter(Boolean)
            .join(','),
      },
      {
        header: 'PREVIEW',
        value: (row) => row.preview ?? '',
        flexible: true,
        style: (text) => styles.dim(text),
      },
    ],
    page.sessions,
  );
  if (page.hasMore) {
    output.note(
      styles.dim(
        `${page.total ?? 'more'} in all; more with --limit or --offset ${(typeof options.offset === 'number' ? options.offset : 0) + page.sessions.length}`,
      ),
    );
  }
  return EXIT.ok;
}

const SUMMARY_LABEL = 'summary of the earlier conversation';

/**
 * The summary a compressed conversation continues from: stored as a user message for the model,
 * but never something the user said.
 */
function isSummary(message: MessageRecord): boolean {
  return classifyMessage(message) === 'pure_carrier';
}

function renderToolCalls(raw: string | null): string[] {
  if (!raw) return [];
  try {
    const calls = JSON.parse(raw) as { function?: { name?: string; arguments?: string } }[];
    return calls.map(
      (call) => `→ ${call.function?.name ?? 'tool'}(${oneLine(call.function?.arguments, 60)})`,
    );
  } catch {
    return [];
  }
}

export async function sessionsShow(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  const limit = typeof options.limit === 'number' ? options.limit : 50;
  const { session, messages, tip } = await withExistingStore(
    context.home,
    async (store) => {
      const found = resolveSession(store, textArg(args, 0));
      const all = limit === 0 ? [] : readAllMessages(store, found.id);
      return {
        session: found,
        messages: all.slice(-limit),
        tip: store.getCompressionTip(found.id),
      };
    },
    () => noSession(args),
  );
  const { output } = context;
  if (output.json) {
    output.printJson({
      session: sessionJson(session),
      compression_tip: tip !== session.id ? tip : null,
      messages: limit === 0 ? [] : messages.map(messageJson),
    });
    return EXIT.ok;
  }
  const styles = output.styles;
  output.line(
    `${styles.bold(printable(session.title ?? '(untitled)'))}  ${styles.cyan(session.id)}`,
  );
  output.line(
    styles.dim(
      [
        `source ${session.source}`,
        session.model ? `model ${session.model}` : '',
        `started ${formatTime(session.startedAt)}`,
        count(session.messageCount, 'message'),
        session.archived ? 'archived' : '',
        session.hidden ? 'hidden' : '',
        session.endReason ? `ended: ${session.endReason}` : '',
      ]
        .filter(Boolean)
        .join(' · '),
    ),
  );
  if (tip !== session.id)
    output.line(styles.yellow(`Compressed; the conversation continues in ${tip}`));
  if (limit === 0) return EXIT.ok;
  if (messages.length < session.messageCount) {
    output.line(
      styles.dim(`… ${session.messageCount - messages.length} earlier messages (--limit)`),
    );
  }
  for (const message of messages) {
    const role = isSummary(message)
      ? styles.yellow(SUMMARY_LABEL)
      : message.role === 'user'
        ? styles.green('you')
        : message.role === 'assistant'
          ? styles.magenta('hermes')
          : styles.dim(printable(message.role + (message.toolName ? ` ${message.toolName}` : '')));
    output.line();
    output.line(`${role} ${styles.dim(formatTime(message.timestamp))}`);
    const content =
      message.role === 'tool'
        ? printable(oneLine(message.content, 200))
        : printable(message.content ?? '', { multiline: true });
    if (content) output.line(message.role === 'tool' ? styles.dim(content) : content);
    for (const call of renderToolCalls(message.toolCalls)) output.line(styles.dim(printable(call)));
  }
  return EXIT.ok;
}

export async function sessionsSearch(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  const query = textArg(args, 0);
  const result = await withExistingStore(
    context.home,
    async (store) =>
      store.searchMessages(query, {
        limit: typeof options.limit === 'number' ? options.limit : 20,
      }),
    // What the store answers when there is nothing to search.
    () => ({ hits: [], mode: 'fts' as const }),
  );
  const { output } = context;
  if (output.json) {
    output.printJson({
      query,
      mode: result.mode,
      hits: result.hits.map((hit) => ({
        session_id: hit.sessionId,
        session_title: hit.session.title,
        message_id: hit.messageId,
        role: hit.role,
        snippet: hit.snippet,
        timestamp: hit.timestamp,
      })),
    });
    return EXIT.ok;
  }
  if (result.hits.length === 0) {
    output.note(`Nothing found for "${query}".`);
    return EXIT.ok;
  }
  const styles = output.styles;
  for (const hit of result.hits) {
    const snippet = printable(oneLine(hit.snippet, 400)).replace(
      />>>(.*?)<<</g,
      (_, match: string) => styles.bold(styles.yellow(match)),
    );
    output.line(
      `${styles.cyan(hit.sessionId)} ${styles.dim(printable(`${hit.session.title ?? '(untitled)'} · ${hit.role} · ${formatTime(hit.timestamp)}`))}`,
    );
    output.line(`  ${snippet}`);
  }
  if (result.mode === 'like') {
    output.warn('the search index is being rebuilt; results come from a slower plain-text scan');
  }
  return EXIT.ok;
}

/** A title from the command line, cleaned as the store will store it; blank is a usage error. */
function titleArg(raw: string): string {
  let title: string | null;
  try {
    title = sanitizeTitle(raw);
  } catch (error) {
    // Too long: the argument is wrong, not the store.
    if (SessionStoreError.isInstance(error)) throw usageError(error.message);
    throw error;
  }
  // setTitle(null) would clear the title: a rename never does that by accident.
  if (title === null) {
    throw usageError('the title is empty', 'Give at least one visible character');
  }
  return title;
}

export async function sessionsRename(context: CommandContext, args: Positional): Promise<number> {
  const title = titleArg(textArg(args, 1));
  const session = await withExistingStore(
    context.home,
    async (store) => {
      const found = resolveSession(store, textArg(args, 0));
      await store.setTitle(found.id, title, { source: 'user' });
      return store.requireSession(found.id);
    },
    () => noSession(args),
  );
  if (context.output.json) context.output.printJson({ session: sessionJson(session) });
  else context.output.line(`Renamed ${session.id} to "${session.title}".`);
  return EXIT.ok;
}

type Flag = 'archive' | 'unarchive' | 'hide' | 'unhide';

export function sessionsFlag(flag: Flag) {
  return async (context: CommandContext, args: Positional): Promise<number> => {
    const { session, changed } = await withExistingStore(
      context.home,
      async (store) => {
        const found = resolveSession(store, textArg(args, 0));
        let count: number;
        if (flag === 'archive' || flag === 'unarchive')
          count = await store.setArchived(found.id, flag === 'archive');
        else count = await store.setHidden(found.id, flag === 'hide');
        return { session: store.requireSession(found.id), changed: count };
      },
      () => noSession(args),
    );
    if (context.output.json) {
      context.output.printJson({ session: sessionJson(session), changed });
      return EXIT.ok;
    }
    const past = { archive: 'Archived', unarchive: 'Unarchived', hide: 'Hid', unhide: 'Unhid' }[
      flag
    ];
    context.output.line(
      `${past} ${session.id}${changed > 1 ? ` (and ${changed - 1} more of its compression lineage)` : ''}.`,
    );
    return EXIT.ok;
  };
}

export async function sessionsDelete(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  return withExistingStore(
    context.home,
    async (store) => {
      const session = resolveSession(store, textArg(args, 0));
      const label = session.title ? `"${session.title}" (${session.id})` : session.id;
      // As the gateway's DELETE: a turn running in the conversation (here or in any process) would
      // go on writing to a session that is gone.
      const busy = (pid: string | undefined) =>
        new CliError({
          code: 'session_busy',
          message: `${label} is running a turn${pid ? ` (process ${pid})` : ''}`,
          hint: 'Let the answer finish, or stop it, then delete the session',
        });
      const holderPid = (holder: string | undefined) =>
        holder === undefined ? undefined : /(?:^|\s)pid=(\d+)(?:\s|$)/.exec(holder)?.[1];
      const lease = store.getTurnLease(session.id);
      if (lease?.active) throw busy(holderPid(lease.holder));
      // A compressed conversation is one unit, as the gateway's DELETE treats it: deleting one of
      // its sessions alone would leave the rest listed under another id, untitled.
      const lineage = store.getLineageIds(session.id);
      const whole = lineage.length > 1;
      if (whole && options.cascade !== true) {
        throw new CliError({
          code: 'delete_cascade_requires_confirmation',
          message: `${label} is part of a compressed conversation of ${lineage.length} sessions (${lineage.join(', ')}): deleting it deletes all of them`,
          hint: 'Pass --cascade to delete the whole conversation',
          exitCode: EXIT.usage,
        });
      }
      const messageCount = whole
        ? lineage.reduce((sum, id) => sum + (store.getSession(id)?.messageCount ?? 0), 0)
        : session.messageCount;
      const confirmed = await confirm(
        whole
          ? `Delete the compressed conversation ${label}: ${lineage.length} sessions and their ${count(messageCount, 'message')}?`
          : `Delete session ${label} and its ${count(messageCount, 'message')}?`,
        { yes: options.yes === true },
      );
      if (!confirmed) {
        context.output.note('Nothing deleted.');
        return EXIT.failure;
      }
      let deleted: string[];
      try {
        deleted = whole
          ? await store.deleteLineage(session.id)
          : (await store.deleteSession(session.id))
            ? [session.id]
            : [];
      } catch (error) {
        // A turn that took its lease after the check above (say while the prompt waited): the
        // store refused inside the delete's transaction and deleted nothing.
        if (SessionStoreError.isInstance(error) && error.code === 'session_busy')
          throw busy(holderPid(store.getTurnLease(session.id)?.holder));
        throw error;
      }
      if (context.output.json) {
        context.output.printJson({
          id: session.id,
          deleted: deleted.length > 0,
          deleted_sessions: deleted,
        });
      } else if (whole) {
        const others = deleted.length - 1;
        context.output.line(
          `Deleted ${label} and the ${others} other session${others === 1 ? '' : 's'} of its compressed conversation.`,
        );
      } else {
        context.output.line(`Deleted ${label}.`);
      }
      return EXIT.ok;
    },
    () => noSession(args),
  );
}

function markdownOf(session: SessionRecord, messages: readonly MessageRecord[]): string {
  const lines = [`# ${session.title ?? session.id}`, ''];
  lines.push(`- id: \`${session.id}\``, `- source: ${session.source}`);
  if (session.model) lines.push(`- model: ${session.model}`);
  lines.push(`- started: ${new Date(session.startedAt * 1000).toISOString()}`, '');
  for (const message of messages) {
    const heading = isSummary(message)
      ? 'Summary of the earlier conversation'
      : message.role === 'user'
        ? 'User'
        : message.role === 'assistant'
          ? 'Assistant'
          : message.role === 'tool'
            ? `Tool result${message.toolName ? ` (${message.toolName})` : ''}`
            : message.role[0]?.toUpperCase() + message.role.slice(1);
    lines.push(`## ${heading}`, '');
    if (message.role === 'tool') lines.push('```', message.content ?? '', '```', '');
    else if (message.content) lines.push(message.content, '');
    for (const call of renderToolCalls(message.toolCalls))
      lines.push(`- ${call.replace(/^→ /, 'calls ')}`);
    if (message.toolCalls) lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

const WRITE_FAILURES: Readonly<Record<string, string>> = {
  ENOENT: 'its folder does not exist',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'it is a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
};

/** Writes an export file; a path that cannot be written is the user's to fix, not a bug. */
async function writeExport(file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text, { mode: 0o600 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    throw new CliError({
      code: 'export_write_failed',
      message: `cannot write ${file}: ${WRITE_FAILURES[code] ?? (error as Error).message}`,
      hint: 'Choose another file with -o, or leave -o out to print the export',
      cause: error,
    });
  }
}

export async function sessionsExport(
  context: CommandContext,
  args: Positional,
  options: CommandOptions,
): Promise<number> {
  const format = options.format === 'md' ? 'md' : 'jsonl';
  const { session, messages } = await withExistingStore(
    context.home,
    async (store) => {
      const found = resolveSession(store, textArg(args, 0));
      return { session: found, messages: readAllMessages(store, found.id) };
    },
    () => noSession(args),
  );
  const text =
    format === 'md'
      ? markdownOf(session, messages)
      : `${[
          JSON.stringify({ type: 'session', ...sessionJson(session) }),
          ...messages.map((message) =>
            JSON.stringify({ type: 'message', ...messageJson(message) }),
          ),
        ].join('\n')}\n`;
  if (typeof options.output === 'string') {
    await writeExport(options.output, text);
    context.output.note(`Wrote ${count(messages.length, 'message')} to ${options.output}`);
  } else {
    process.stdout.write(text);
  }
  return EXIT.ok;
}
