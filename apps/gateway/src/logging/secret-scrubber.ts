/** Below this length a "secret" is too likely to appear in ordinary text to be scrubbed by value. */
const MIN_SCRUBBED_LENGTH = 6;

/** Environment names whose values are secrets (keys, tokens, passwords). */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSPHRASE|CREDENTIAL|AUTH)/i;

export const REDACTED = '[REDACTED]';

/**
 * Every secret value the gateway knows of (API server keys, model keys, tokens from the process
 * environment and each profile's `.env`), replaced by `[REDACTED]` in every log line. Pino's
 * `redact` paths catch secrets in known fields; this catches one that ends up anywhere else — an
 * error message quoting a URL with a key, a provider echoing a header.
 */
export class SecretScrubber {
  #secrets: string[] = [];

  /** Adds values; blanks and very short values are ignored. */
  add(...values: readonly (string | undefined | null)[]): void {
    let changed = false;
    for (const value of values) {
      const secret = value?.trim();
      if (!secret || secret.length < MIN_SCRUBBED_LENGTH) continue;
      // Log lines are JSON: a secret with a quote or backslash appears escaped there.
      for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) {
        if (this.#secrets.includes(form)) continue;
        this.#secrets.push(form);
        changed = true;
      }
    }
    // Longest first, so a secret that contains another is replaced whole.
    if (changed) this.#secrets.sort((a, b) => b.length - a.length);
  }

  /** Adds the values of every variable whose name says it holds a secret. */
  addFromEnvironment(env: Readonly<Record<string, string | undefined>>): void {
    for (const [name, value] of Object.entries(env)) {
      if (SECRET_NAME.test(name)) this.add(value);
    }
  }

  get size(): number {
    return this.#secrets.length;
  }

  scrub(text: string): string {
    let result = text;
    for (const secret of this.#secrets) {
      if (result.includes(secret)) result = result.replaceAll(secret, REDACTED);
    }
    return result;
  }
}
