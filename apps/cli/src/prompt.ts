import { createInterface } from 'node:readline/promises';
import { usageError } from './errors.js';

/**
 * Asks a yes/no question on the terminal (default no). Without a terminal there is nobody to ask:
 * that is a usage error naming the flag that answers in advance.
 */
export async function confirm(
  question: string,
  options: { yes: boolean; flag?: string },
): Promise<boolean> {
  if (options.yes) return true;
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw usageError(
      `${question.replace(/\?$/, '')}: not on a terminal, so nobody can confirm`,
      `Pass ${options.flag ?? '--yes'} to confirm in advance`,
    );
  }
  const readline = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await readline.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    readline.close();
  }
}
