import { describe, expect, it } from 'vitest';
import { redactSecrets } from './redact-secrets.js';

const secrets = {
  openai: 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123',
  anthropic: 'sk-ant-api03-AbCdEfGhIjKlMnOpQrSt',
  telegram: '123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0',
  github: 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
  slack: 'xoxb-1234567890-abcdefghijkl',
  aws: 'AKIAIOSFODNN7EXAMPLE',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXZhbHVl',
  plain: 'hunter2-correct-horse',
};

describe('redactSecrets', () => {
  it('masks the values of secret-named flags, assignments and key: value pairs', () => {
    const lines = [
      `node gateway.js --api-key=${secrets.plain} --port 8080`,
      `node gateway.js --token ${secrets.plain} --verbose`,
      `env OPENAI_API_KEY=${secrets.plain} TELEGRAM_BOT_TOKEN='${secrets.plain}' hermes`,
      `{"password": "${secrets.plain}", "user": "ada"}`,
      `curl https://api.example.com/v1?token=${secrets.plain}&page=2`,
      `git clone https://ada:${secrets.plain}@example.com/repo.git`,
      `Authorization: Bearer ${secrets.plain}`,
      `--client-secret ${secrets.plain}`,
    ];
    for (const line of lines) {
      const redacted = redactSecrets(line);
      expect(redacted, line).not.toContain(secrets.plain);
      expect(redacted, line).toContain('[REDACTED]');
    }
    // What is not a secret stays readable.
    expect(redactSecrets(`node gateway.js --api-key=${secrets.plain} --port 8080`)).toBe(
      'node gateway.js --api-key=[REDACTED] --port 8080',
    );
    expect(redactSecrets(`{"password": "${secrets.plain}", "user": "ada"}`)).toContain(
      '"user": "ada"',
    );
  });

  it('masks well-known token shapes wherever they appear', () => {
    for (const [kind, secret] of Object.entries(secrets)) {
      if (kind === 'plain') continue;
      const redacted = redactSecrets(`python bot.py ${secret} --debug`);
      expect(redacted, kind).not.toContain(secret);
      expect(redacted, kind).toBe('python bot.py [REDACTED] --debug');
    }
  });

  it('never reaches across a line break for a value', () => {
    const listing =
      'root  1  /sbin/agent --auth-required\nroot  2  /sbin/agent --token\nada  3  bash';
    expect(redactSecrets(listing)).toBe(listing);
  });

  it('leaves an ordinary process listing alone', () => {
    const listing = [
      'USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND',
      'ada        4242  0.3  1.2 987654 54321 ?        Ssl  09:00   0:01 node /opt/hermes/gateway.js --port 8080 --home /home/ada/.hermes',
      'root          1  0.0  0.0   4372  3256 ?        Ss   08:59   0:00 /sbin/init splash',
    ].join('\n');
    expect(redactSecrets(listing)).toBe(listing);
  });
});
