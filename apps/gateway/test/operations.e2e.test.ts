import { existsSync } from 'node:fs';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startModelServer, tempHome } from '@hermes/testkit';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { RESUME_NOTE } from '../src/platforms/conversations.js';
import {
  CLEAN_SHUTDOWN_FILE,
  ONLINE_NOTICE_TEXT,
  RESTART_NOTICE_TEXT,
  RESTART_NOTIFY_FILE,
  RESTART_PENDING_FILE,
} from '../src/restart/markers.js';
import { type FakeTelegram, startFakeTelegram } from './fake-telegram.js';
import { modelConfig, startGateway, writeConfig } from './gateway-process.js';
import { echoScript } from './model-scripts.js';

const TOKEN = '55:ops-telegram-token-abcdefghijklmnopq';
const fakes: FakeTelegram[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

function telegramYaml(baseUrl: string, extra = '') {
  return `platforms:\n  telegram:\n    enabled: true\n    api_base_url: ${baseUrl}\n    poll_timeout: 1\n    home_channel: 9000\n${extra}`;
}

describe('GET /metrics', () => {
  it('serves the Prometheus text format with turns, tool calls, model latency, adapters, backlogs, loop delay and strikes; the API key guards it', async () => {
    const telegram = await startFakeTelegram({ token: TOKEN });
    fakes.push(telegram);
    const model = await startModelServer({
      script: [
        {
          toolCalls: [
            { name: 'todo', arguments: { todos: [{ id: '1', content: 'x', status: 'pending' }] } },
          ],
        },
        { text: 'done' },
      ],
    });
    const home = (await tempHome()).path;
    await writeConfig(home, modelConfig(model.baseUrl, telegramYaml(telegram.baseUrl)));
    const gateway = await startGateway({
      home,
      env: { TELEGRAM_BOT_TOKEN: TOKEN, API_SERVER_KEY: 'metrics-key-0123456789' },
    });
    telegram.pushMessage({ chatId: 1, text: 'go' });
    await telegram.waitForSent(1);

    expect((await gateway.request('/metrics')).status).toBe(401);
    const response = await gateway.request('/metrics', { key: 'metrics-key-0123456789' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toMatch(/^hermes_turns_total\{kind="platform",status="completed"\} 1$/m);
    expect(text).toMatch(/^hermes_tool_calls_total\{tool="todo",outcome="ok"\} 1$/m);
    expect(text).toMatch(/^hermes_model_call_duration_seconds_count\{provider="[^"]+"\} 2$/m);
    expect(text).toMatch(/^hermes_platform_up\{platform="telegram"\} 1$/m);
    expect(text).toMatch(/^hermes_platform_state\{platform="telegram",state="connected"\} 1$/m);
    expect(text).toMatch(/^hermes_platform_reconnect_attempts_total\{platform="telegram"\} 0$/m);
    expect(text).toMatch(/^hermes_obligation_backlog 0$/m);
    expect(text).toMatch(/^hermes_delegation_backlog\{state="pending"\} 0$/m);
    expect(text).toMatch(/^hermes_event_loop_delay_seconds\{stat="p99"\} [\d.e-]+$/m);
    expect(text).toMatch(/^hermes_watchdog_strikes 0$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });
});

describe('restart semantics', () => {
  it('SIGUSR1 drains and exits 75 for the service manager; the next start sends the online notice to the home channel once and clears the marker', async () => {
    const telegram = await startFakeTelegram({ token: TOKEN });
    fakes.push(telegram);
    const home = (await tempHome()).path;
    await writeConfig(home, telegramYaml(telegram.baseUrl));
    const first = await startGateway({ home, env: { TELEGRAM_BOT_TOKEN: TOKEN } });
    first.process.kill('SIGUSR1');
    expect((await first.process.exited).code).toBe(75);
    expect(JSON.parse(await readFile(path.join(home, RESTART_PENDING_FILE), 'utf8'))).toMatchObject(
      {
        via_service: true,
      },
    );
    expect(existsSync(path.join(home, CLEAN_SHUTDOWN_FILE))).toBe(true);

    // A chat that asked for the restart is told first, and only once.
    await writeFile(
      path.join(home, RESTART_NOTIFY_FILE),
      JSON.stringify({ platform: 'telegram', chat_id: 31 }),
    );
    const second = await startGateway({ home, env: { TELEGRAM_BOT_TOKEN: TOKEN } });
    const sent = await telegram.waitForSent(2);
    expect(sent.map((message) => [message.chatId, message.text])).toEqual([
      ['31', RESTART_NOTICE_TEXT],
      ['9000', ONLINE_NOTICE_TEXT],
    ]);
    // The markers go once their notices are sent (always, whatever the outcome).
    for (let index = 0; index < 40 && existsSync(path.join(home, RESTART_PENDING_FILE)); index += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(path.join(home, RESTART_PENDING_FILE))).toBe(false);
    expect(existsSync(path.join(home, RESTART_NOTIFY_FILE))).toBe(false);
    expect(existsSync(path.join(home, CLEAN_SHUTDOWN_FILE))).toBe(false); // consumed
    second.process.kill('SIGTERM');
    expect((await second.process.exited).code).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(telegram.sent).toHaveLength(2);
  });

  it('a turn interrupted by the drain budget is pre-marked resume_pending and resumed once at the next start, behind the restore gate', async () => {
    const telegram = await startFakeTelegram({ token: TOKEN });
    fakes.push(telegram);
    const model = await startModelServer({
      script: [{ text: 'slow answer', delayMs: 5000 }, ...echoScript(10)],
    });
    const home = (await tempHome()).path;
    await writeConfig(home, modelConfig(model.baseUrl, telegramYaml(telegram.baseUrl)));
    const first = await startGateway({
      home,
      env: { TELEGRAM_BOT_TOKEN: TOKEN },
      args: ['--drain-timeout', '0'],
    });
    telegram.pushMessage({ chatId: 8, text: 'long question' });
    while (model.modelRequests.length === 0)
      await new Promise((resolve) => setTimeout(resolve, 20));
    first.process.kill('SIGTERM');
    expect((await first.process.exited).code).toBe(0);
    expect(telegram.sent).toHaveLength(0);
    // The drain timed out: no clean-shutdown marker, the session still owes its turn.
    expect(existsSync(path.join(home, CLEAN_SHUTDOWN_FILE))).toBe(false);
    const database = new Database(path.join(home, 'state.db'), { readonly: true });
    const pending = database
      .prepare(
        `SELECT resume_pending AS p, resume_reason AS r FROM sessions WHERE source = 'telegram'`,
      )
      .get() as { p: number; r: string };
    database.close();
    expect(pending).toEqual({ p: 1, r: 'restart_interrupted' });

    // A new message arrives while the previous run's turn is resumed: it waits for it.
    telegram.pushMessage({ chatId: 8, text: 'second question' });
    await startGateway({ home, env: { TELEGRAM_BOT_TOKEN: TOKEN } });
    const sent = await telegram.waitForSent(2);
    expect(sent.map((message) => message.text)).toEqual([
      'echo: long question',
      'echo: second question',
    ]);
    const resumed = model.modelRequests.filter((request) =>
      JSON.stringify(request.body).includes(RESUME_NOTE),
    );
    expect(resumed).toHaveLength(1);
    const check = new Database(path.join(home, 'state.db'), { readonly: true });
    const users = check
      .prepare(`SELECT content FROM messages WHERE role = 'user' ORDER BY id`)
      .all() as { content: string }[];
    check.close();
    expect(users.map((row) => row.content)).toEqual(['long question', 'second question']);
  });
});

describe('housekeeping in the running gateway', () => {
  it('sweeps stale cache files on its cadence without blocking requests, and stops promptly', async () => {
    const home = (await tempHome()).path;
    await writeConfig(home, 'gateway:\n  housekeeping_interval: 0.02\n');
    const stale = path.join(home, 'cache/images/img_0123456789ab.png');
    const fresh = path.join(home, 'cache/images/img_ba9876543210.png');
    await mkdir(path.dirname(stale), { recursive: true });
    await writeFile(stale, 'x');
    await writeFile(fresh, 'y');
    const old = new Date(Date.now() - 25 * 3_600_000);
    await utimes(stale, old, old);
    const gateway = await startGateway({ home });
    // 60 ticks of 20 ms: the hourly sweep runs after about 1.2 s.
    for (let index = 0; index < 100 && existsSync(stale); index += 1) {
      expect((await gateway.json('/health')).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    // The sweep deletes, then logs: the line may reach the pipe a moment after the file is gone.
    await gateway.process.waitForLine('Image cache cleanup: removed 1 stale file(s)', 5000);
    expect(gateway.process.stderr()).toContain('Image cache cleanup: removed 1 stale file(s)');
    const started = Date.now();
    gateway.process.kill('SIGTERM');
    expect((await gateway.process.exited).code).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(gateway.process.stderr()).toContain('Gateway housekeeping stopped');
  });
});
