import { execFileSync } from 'node:child_process';

/**
 * Writes a shell script that tests run as a stand-in git. A child process writes it: had this
 * process written it, a child that another test thread forks at that moment would inherit the
 * open file and running the script would fail with ETXTBSY (text file busy).
 */
export function writeExecutableScript(path: string, body: string, mode = 0o755): void {
  execFileSync('sh', ['-c', 'cat > "$1" && chmod "$2" "$1"', 'sh', path, mode.toString(8)], {
    input: `#!/bin/sh\n${body}\n`,
  });
}
