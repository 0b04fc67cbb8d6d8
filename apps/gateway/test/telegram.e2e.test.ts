import { queryGatewayStatus, readRuntimeStatus } from '@hermes/control-socket';
import { spawnProcess, startModelServer, tempHome } from '@hermes/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeTelegram, startFakeTelegram } from './fake-telegram.js';
import {
  GATEWAY_BIN,
  gatewayEnv,
  modelConfig,
  startGateway,
  writeConfig,
} from './gateway-process.js';
import { echoScript } from './model-scripts.js';

const TOKEN = '123456:test-telegram-token-abcdefghijklmnop';
const fakes: FakeTelegram[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

async function fakeTelegram() {
  const fake = await startFakeTelegram({ token: TOKEN });
  fakes.push(fake);
  return fake;
}

function telegramYaml(baseUrl: string, extra = '') {
  return `platforms:\n  telegram:\n    enabled: true\n    api_base_url: ${baseUrl}\n    poll_timeout: 1\n${extra}`;
}

function webhookYaml() {
  return `  webhook:\n    enabled: true\n    port: 0\n    routes:\n      ping:\n        secret: INSECURE_NO_AUTH\n        deliver_only: true\n`;
}

interface PlatformRow {
  platform: string;
  state: string;
  errorCode: string | null;
  reconnectAttempts: number;
  reconnects: number;
}

async function platformStates(home: string): Promise<Record<string, PlatformRow>> {
  const status = (await queryGatewayStatus(home)) as { platforms?: PlatformRow[] } | null;
  return Object.fromEntries((status?.platforms ?? []).map((row) => [row.platform, row]));
}

async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('telegram adapter', () => {
  it('answers a chat message through the model, registers the command menu and answers /help without the model', async () => {
    const telegram = await fakeTelegram();
    const model = await startModelServer({
      script: [{ text: 'Hello Ada, this is Hermes.' }],
    });
    const home = (await tempHome()).path;
    await writeConfig(home, modelConfig(model.baseUrl, telegramYaml(telegram.baseUrl)));
    const gateway = await startGateway({ home, env: { TELEGRAM_BOT_TOKEN: TOKEN } });

    telegram.pushMessage({ chatId: 777, text: 'Hi there' });
    const [reply] = await telegram.waitForSent(1);
    expect(reply).toMatchObject({ chatId: '777', text: 'Hello Ada, this is Hermes.' });
    expect(model.modelRequests.length).toBe(1);
    expect(telegram.commands.map((command) => command.command)).toContain('review');
    expect(telegram.calls.some((call) => call.method === 'sendChatAction')).toBe(true);

    telegram.pushMessage({ chatId: 777, text: '/help' });
    const sent = await telegram.waitForSent(2);
    expect(sent[1]?.text).toMatch(/^Commands available here:/);
    expect(model.modelRequests.length).toBe(1);

    // Both turns are in one stored conversation for the chat.
    const sessions = await gateway.json<{ data: { id: string; source: string }[] }>(
      '/api/sessions?source=telegram',
    );
    expect(sessions.body.data).toHaveLength(1);
    expect((await platformStates(home)).telegram?.state).toBe('connected');
  });

  it('a rejected bot token is fatal and not retried: with no other platform the gateway exits 78 (startup_failed)', async () => {
    const telegram = await fakeTelegram();
    telegram.mode = 'unauthorized';
    const home = (await tempHome()).path;
    await writeConfig(home, telegramYaml(telegram.baseUrl));
    const child = await spawnProcess({
      command: process.execPath,
      args: [GATEWAY_BIN, '--port', '0'],
      env: gatewayEnv(home, { TELEGRAM_BOT_TOKEN: TOKEN }),
    });
    const exit = await child.exited;
    expect(exit.code).toBe(78);
    expect(child.stderr()).toMatch(
      /no messaging platform could start: telegram: Telegram rejected the bot token \(HTTP 401\)/,
    );
    expect((await readRuntimeStatus(home))?.gateway_state).toBe('startup_failed');
    expect(telegram.calls.filter((call) => call.method === 'getMe')).toHaveLength(1);
    expect(child.stderr() + child.stdout()).not.toContain(TOKEN);
  });

  it('a rejected token beside a working platform leaves the gateway up with telegram fatal', async () => {
    const telegram = await fakeTelegram();
    telegram.mode = 'unauthorized';
    const home = (await tempHome()).path;
    await writeConfig(home, telegramYaml(telegram.baseUrl) + webhookYaml());
    await startGateway({
      home,
      env: { TELEGRAM_BOT_TOKEN: TOKEN },
      args: ['--time-scale', '0.01'],
    });
    const states = await platformStates(home);
    expect(states.telegram).toMatchObject({ state: 'fatal', errorCode: 'telegram_unauthorized' });
    expect(states.webhook?.state).toBe('connected');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // 150 s of watcher time
    expect(telegram.calls.filter((call) => call.method === 'getMe')).toHaveLength(1);
  });

  it('409 conflict and 5xx are retryable: the platform is queued and connects once Telegram answers again', async () => {
    const telegram = await fakeTelegram();
    telegram.mode = 'conflict';
    const home = (await tempHome()).path;
    await writeConfig(home, telegramYaml(telegram.baseUrl) + webhookYaml());
    await startGateway({
      home,
      env: { TELEGRAM_BOT_TOKEN: TOKEN },
      args: ['--time-scale', '0.01'],
    });
    // getMe works under a conflict; polling does not: the adapter reports a retryable fatal error.
    await until(
      async () => (await platformStates(home)).telegram?.errorCode === 'telegram_conflict',
    );
    expect((await platformStates(home)).telegram?.state).toBe('retrying');
    telegram.mode = 'server_error';
    await until(
      async () => (await platformStates(home)).telegram?.errorCode === 'telegram_http_502',
    );
    telegram.mode = 'ok';
    await until(async () => (await platformStates(home)).telegram?.state === 'connected');
  });
});

describe('telegram outage under supervision', () => {
  it('Telegram down longer than the supervised budget while the webhook stays connected: reconnected when it returns, no restart loop, nothing stranded', async () => {
    const telegram = await fakeTelegram();
    const model = await startModelServer({ script: echoScript(50) });
    const home = (await tempHome()).path;
    await writeConfig(
      home,
      modelConfig(model.baseUrl, telegramYaml(telegram.baseUrl) + webhookYaml()),
    );
    // Time runs 100× faster for supervision: the supervised budget (1+2+4+8+16 s) is 0.31 s, the
    // reconnect backoff 0.3, 0.6, 1.2, 2.4, 3, 3 … s.
    const gateway = await startGateway({
      home,
      env: { TELEGRAM_BOT_TOKEN: TOKEN },
      args: ['--time-scale', '0.01'],
    });
    const pid = gateway.process.pid;
    telegram.pushMessage({ chatId: 5, text: 'before' });
    await telegram.waitForSent(1);

    await telegram.down();
    const downAt = Date.now();
    await until(async () => (await platformStates(home)).telegram?.state === 'retrying');
    // Stay down for 6 s: 20× the supervised budget, several reconnect attempts.
    const webhookUrl = await until(async () => {
      const status = (await queryGatewayStatus(home)) as { webhook_url?: string } | null;
      return status?.webhook_url;
    });
    while (Date.now() - downAt < 6000) {
      // The other adapter keeps serving through the outage.
      const response = await fetch(`${webhookUrl}/webhooks/ping`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': `r-${Date.now()}` },
        body: '{"hello":"world"}',
      });
      expect(response.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const during = await platformStates(home);
    expect(during.webhook?.state).toBe('connected');
    expect(during.telegram?.state).toBe('retrying');
    const attempts = during.telegram?.reconnectAttempts ?? 0;
    // Backed off (0.3, 0.6, 1.2, 2.4 s …), not a tight loop: a handful of attempts in 6 s.
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(attempts).toBeLessThanOrEqual(8);

    await telegram.up();
    await until(async () => (await platformStates(home)).telegram?.state === 'connected', 15_000);
    telegram.pushMessage({ chatId: 5, text: 'after' });
    const sent = await telegram.waitForSent(2);
    expect(sent[1]?.text).toBe('echo: after');

    // Same process all along (no restart loop), still running, one reconnect.
    expect(gateway.process.pid).toBe(pid);
    expect((await queryGatewayStatus(home))?.answering_pid).toBe(pid);
    expect((await platformStates(home)).telegram?.reconnects).toBe(1);
    const log = gateway.process.stderr();
    expect(log).toContain('telegram queued for background reconnection');
    expect(log).not.toContain('adapter was lost without entering the reconnection queue');
    expect(log).not.toMatch(/Supervised task platform_reconnect_watcher died/);
  });
});
