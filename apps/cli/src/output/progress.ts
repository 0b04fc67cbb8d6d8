import type { Output } from './output.js';

export interface Progress {
  /** Changes the text shown while the work goes on. */
  update(text: string): void;
}

/**
 * Runs `work` with a spinner on stderr when stderr is a TTY (after 250 ms, so quick work shows
 * nothing), or one plain `<label>…` line otherwise. The spinner line is cleared when the work ends
 * either way; the caller prints the outcome.
 */
export async function withProgress<T>(
  output: Output,
  label: string,
  work: (progress: Progress) => Promise<T>,
): Promise<T> {
  if (!output.stderrIsTty) {
    output.note(`${label}…`);
    return work({ update: () => {} });
  }
  const { spinner } = await import('@clack/prompts');
  const indicator = spinner({ output: process.stderr, withGuide: false });
  let text = label;
  let started = false;
  const timer = setTimeout(() => {
    started = true;
    indicator.start(text);
  }, 250);
  try {
    return await work({
      update(next) {
        text = next;
        if (started) indicator.message(next);
      },
    });
  } finally {
    clearTimeout(timer);
    if (started) indicator.clear();
  }
}
