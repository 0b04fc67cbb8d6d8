/**
 * Masks what looks like a credential in free text — process listings, command lines, journal
 * lines — before it is written to a diagnostic log. "A secret" here is:
 * - the value of a command-line flag, environment assignment or `key: value` pair whose name says
 *   it holds one (`--api-key=…`, `--token …`, `OPENAI_API_KEY=…`, `"password": "…"`, `?token=…`):
 *   names containing api key, token, secret, password/passwd, passphrase, credential, auth,
 *   private key, access key, session key, cookie or bearer;
 * - the password in a URL (`https://user:…@host`) and an `Authorization: Bearer|Basic …` value;
 * - a string shaped like a well-known token: `sk-…` (OpenAI, Anthropic), GitHub `ghp_…` /
 *   `github_pat_…`, Slack `xox?-…`, AWS `AKIA…`, Google `AIza…`, a Telegram bot token
 *   (`123456789:AA…`), a JWT.
 * It errs on the side of masking: a flag such as `--auth-mode basic` loses its value too.
 *
 * The diagnostic child process runs this function from its source text (embedded with
 * `Function.prototype.toString`), so it must stay self-contained: no imports, no helpers.
 */
export function redactSecrets(text: string): string {
  const mask = '[REDACTED]';
  const name =
    '[A-Za-z0-9_.-]*(?:api[_-]?key|apikey|token|secret|passw(?:or)?d|passphrase|credential|auth|private[_-]?key|access[_-]?key|session[_-]?key|cookie|bearer)[A-Za-z0-9_.-]*';
  const value = `("[^"]*"|'[^']*'|[^\\s&"',;]+)`;
  return (
    text
      // Authorization: Bearer … (first: the header's own name would otherwise mask only "Bearer")
      .replace(/\b(Bearer|Basic)[ \t]+[A-Za-z0-9._~+/=-]{8,}/g, `$1 ${mask}`)
      // scheme://user:password@host
      .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]+@/gi, `$1${mask}@`)
      // --api-key=value, --api-key value, -token value
      .replace(new RegExp(`(\\s|^)(--?${name})(=|[ \\t]+)${value}`, 'gim'), `$1$2$3${mask}`)
      // API_KEY=value, "password": "value", ?token=value
      .replace(new RegExp(`(\\b${name}["']?[ \\t]*[=:][ \\t]*)${value}`, 'gi'), `$1${mask}`)
      .replace(/\bsk-[A-Za-z0-9_-]{16,}/g, mask)
      .replace(/\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g, mask)
      .replace(/\bgithub_pat_[A-Za-z0-9_]{20,}/g, mask)
      .replace(/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, mask)
      .replace(/\bAKIA[0-9A-Z]{16}\b/g, mask)
      .replace(/\bAIza[0-9A-Za-z_-]{35}/g, mask)
      .replace(/\b\d{8,10}:[A-Za-z0-9_-]{35}\b/g, mask)
      .replace(/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, mask)
  );
}
