/** One rule that marks a shell command as needing approval. */
export interface DangerousPattern {
  /** Stable key; a `session` approval remembers it. */
  readonly key: string;
  readonly reason: string;
  readonly pattern: RegExp;
}

/** Commands that can destroy data, take the machine down or run code fetched from elsewhere. */
export const DANGEROUS_PATTERNS: readonly DangerousPattern[] = [
  {
    key: 'recursive_delete',
    reason: 'recursive delete',
    pattern: /\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b/,
  },
  {
    key: 'find_delete',
    reason: 'find with -delete or -exec rm',
    pattern: /\bfind\b.*(-delete\b|-exec\s+rm\b)/,
  },
  { key: 'disk_format', reason: 'filesystem format', pattern: /\bmkfs(\.\w+)?\b/ },
  {
    key: 'raw_disk_write',
    reason: 'raw disk write',
    pattern: /\bdd\b.*\bof=\/dev\/|>\s*\/dev\/(sd|nvme|hd|vd)[a-z0-9]*/,
  },
  {
    key: 'world_writable',
    reason: 'recursive chmod/chown',
    pattern: /\bch(mod|own)\s+(-[a-zA-Z]*R|--recursive)\b/,
  },
  {
    key: 'pipe_to_shell',
    reason: 'piping downloaded code into a shell',
    pattern: /\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b/,
  },
  {
    key: 'power',
    reason: 'shutdown or reboot',
    pattern: /\b(shutdown|reboot|halt|poweroff)\b|\binit\s+[06]\b/,
  },
  {
    key: 'kill_all',
    reason: 'killing every process',
    pattern: /\bkill\s+(-\S+\s+)?-1\b|\bkillall\b|\bpkill\s+-9\b/,
  },
  { key: 'fork_bomb', reason: 'fork bomb', pattern: /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/ },
  {
    key: 'git_force',
    reason: 'force push or hard reset',
    pattern: /\bgit\s+(push\b.*(--force\b|-f\b)|reset\s+--hard\b|clean\s+-[a-zA-Z]*f)/,
  },
  {
    key: 'sql_drop',
    reason: 'dropping a database object',
    pattern: /\b(DROP\s+(TABLE|DATABASE|SCHEMA)|TRUNCATE\s+TABLE)\b/i,
  },
  { key: 'sudo', reason: 'running as root', pattern: /(^|[;&|]\s*)sudo\b/ },
  {
    key: 'system_files',
    reason: 'writing system files',
    pattern: />\s*\/etc\/|\btee\s+(-a\s+)?\/etc\//,
  },
];

/** The first rule a command trips, or undefined when it is not dangerous. */
export function detectDangerousCommand(command: string): DangerousPattern | undefined {
  return DANGEROUS_PATTERNS.find((rule) => rule.pattern.test(command));
}
