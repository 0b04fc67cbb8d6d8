import { spawn } from 'node:child_process';
import * as v from 'valibot';
import { detectDangerousCommand } from '../dangerous-commands.js';
import { defineTool } from '../define-tool.js';
import { HeadTailBuffer } from '../head-tail-buffer.js';
import { resolveToolPath } from '../resolve-path.js';

/** Between SIGTERM and SIGKILL when a command is stopped. */
export const TERMINAL_KILL_GRACE_MS = 2000;

/** Keeps tools that would prompt from waiting on a terminal nobody watches. */
const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  CI: '1',
  DEBIAN_FRONTEND: 'noninteractive',
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
  NO_COLOR: '1',
  TERM: 'dumb',
};

const APPROVED_KEYS = 'terminal.approvedPatterns';

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

export interface CommandResult {
  exit_code: number | null;
  output: string;
  signal?: string;
  timed_out?: true;
  interrupted?: true;
  truncated?: true;
  pid: number;
}

/**
 * Runs `command` with bash in its own process group (`detached`), stdin closed. On timeout or
 * abort the whole group gets SIGTERM, then SIGKILL after a grace period; when the command
 * itself exits, anything it left running in its group is killed too, so no process outlives
 * the call and no pipe holds the result back.
 */
export function runCommand(options: {
  command: string;
  cwd: string;
  timeoutMs: number;
  maxOutputChars: number;
  signal: AbortSignal;
}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const output = new HeadTailBuffer(options.maxOutputChars);
    const child = spawn('/bin/bash', ['-c', options.command], {
      cwd: options.cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...NON_INTERACTIVE_ENV },
    });
    let stopReason: 'timeout' | 'interrupt' | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    const stop = (reason: 'timeout' | 'interrupt') => {
      if (stopReason || child.pid === undefined) return;
      stopReason = reason;
      killGroup(child.pid, 'SIGTERM');
      graceTimer = setTimeout(() => {
        if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      }, TERMINAL_KILL_GRACE_MS);
      graceTimer.unref();
    };
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
    timer.unref();
    const onAbort = () => stop('interrupt');
    options.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Leftover members of the group (background jobs) would keep the pipes open.
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
    });
    child.on('close', () => {
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      options.signal.removeEventListener('abort', onAbort);
      resolve({
        exit_code: exit?.code ?? null,
        output: output.toString(),
        pid: child.pid as number,
        ...(exit?.signal ? { signal: exit.signal } : {}),
        ...(stopReason === 'timeout' ? { timed_out: true as const } : {}),
        ...(stopReason === 'interrupt' ? { interrupted: true as const } : {}),
        ...(output.truncated ? { truncated: true as const } : {}),
      });
    });
    if (options.signal.aborted) onAbort();
  });
}

export const terminalTool = defineTool({
  name: 'terminal',
  toolset: 'terminal',
  description:
    'Run a shell command (bash, non-interactive: stdin is closed) in the working directory and return its exit code and output (head and tail kept when long). Dangerous commands need the user’s approval.',
  parameters: v.object({
    command: v.pipe(v.string(), v.minLength(1)),
    timeout: v.optional(
      v.pipe(
        v.number(),
        v.minValue(1),
        v.maxValue(86_400),
        v.description('Seconds before the command is killed'),
      ),
    ),
    workdir: v.optional(
      v.pipe(v.string(), v.description('Working directory (default: the turn’s)')),
    ),
  }),
  async run(args, context) {
    const danger = detectDangerousCommand(args.command);
    if (danger && context.config.approvals.mode !== 'off') {
      const approved =
        (context.sessionState.get(APPROVED_KEYS) as Set<string> | undefined) ?? new Set();
      if (!approved.has(danger.key)) {
        const decision = await context.approve({ command: args.command, reason: danger.reason });
        if (decision === 'deny')
          throw new Error(
            `Command denied: it needs approval (${danger.reason}) and the user did not approve it. Do not retry it; choose a safer approach or ask the user.`,
          );
        if (decision === 'session') {
          approved.add(danger.key);
          context.sessionState.set(APPROVED_KEYS, approved);
        }
      }
    }
    const result = await runCommand({
      command: args.command,
      cwd: args.workdir ? resolveToolPath(context.cwd, args.workdir) : context.cwd,
      timeoutMs: (args.timeout ?? context.config.terminal.timeoutS) * 1000,
      maxOutputChars: context.config.terminal.maxOutputChars,
      signal: context.signal,
    });
    const { pid: _pid, ...visible } = result;
    return visible;
  },
});
