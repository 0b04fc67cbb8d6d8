import path from 'node:path';
import { RECOVERED_MARKER } from '@hermes/session-store';
import {
  type RecordedRequest,
  type ScriptedTurn,
  seededRandom,
  spawnProcess,
  startModelServer,
  tempHome,
} from '@hermes/testkit';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { RESUME_NOTE } from '../src/platforms/conversations.js';
import { type FakeTelegram, startFakeTelegram } from './fake-telegram.js';
import { GATEWAY_BIN, gatewayEnv, modelConfig, writeConfig } from './gateway-process.js';

/**
 * The chaos test: a gateway with replies in flight is SIGKILLed at seeded random moments, many
 * times over; after every restart, every reply owed is delivered, no user message is stored twice
 * and no turn is started twice. `CHAOS_RUNS` (default 20) and `CHAOS_SEED` make it stronger or
 * reproducible: `CHAOS_RUNS=200 CHAOS_SEED=7 pnpm --filter @hermes/gateway exec vitest run test/chaos.e2e.test.ts`.
 */
const RUNS = Number(process.env.CHAOS_RUNS ?? 20);
const SEED = Number(process.env.CHAOS_SEED ?? 20_260_612);
const TOKEN = '987654:chaos-telegram-token-abcdefghijklmno';
const CHATS = [101, 102, 103];

type Message = { role: string; content?: unknown; tool_calls?: unknown };

function tokenOf(messages: readonly Message[]): string | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role === 'user' && typeof message.content === 'string') {
      const match = /\b(m\d+-\d+)\b/.exec(message.content);
      if (match) return match[1];
    }
  }
  return undefined;
}

/**
 * The model: every other message needs a tool call first (two model calls, a stored tool round in
 * between — a wider window for a kill to land mid-turn); the final answer is `ack:<token>`. Each
 * call takes 20–120 ms.
 */
function chaosScript(count: number, random: () => number): ScriptedTurn[] {
  return Array.from({ length: count }, () => (request: RecordedRequest) => {
    const messages = (request.body as { messages: Message[] }).messages;
    const token = tokenOf(messages) ?? 'none';
    const last = messages.at(-1);
    const delayMs = 20 + Math.floor(random() * 100);
    const needsTool = Number(token.split('-')[1] ?? 0) % 2 === 1;
    if (needsTool && last?.role === 'user')
      return {
        delayMs,
        toolCalls: [
          { name: 'todo', arguments: { todos: [{ id: '1', content: token, status: 'pending' }] } },
        ],
      };
    return { delayMs, text: `ack:${token}` };
  });
}

const fakes: FakeTelegram[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

describe('chaos: SIGKILL with replies in flight', () => {
  it(`${RUNS} seeded kills (seed ${SEED}): every owed reply delivered, nothing stored or started twice`, async () => {
    const random = seededRandom(SEED);
    const telegram = await startFakeTelegram({ token: TOKEN });
    fakes.push(telegram);
    // Telegram-like latency: a reply is in the chat 60 ms before the sender hears so.
    telegram.sendLatencyMs = 60;
    // Model delays draw from their own generator so the kill schedule stays reproducible.
    const model = await startModelServer({
      script: chaosScript(RUNS * 40 + 200, seededRandom(SEED + 1)),
    });
    const home = (await tempHome()).path;
    await writeConfig(
      home,
      modelConfig(
        model.baseUrl,
        `platforms:\n  telegram:\n    enabled: true\n    api_base_url: ${telegram.baseUrl}\n    poll_timeout: 1\n    command_menu: false\n`,
      ),
    );
    const start = () =>
      spawnProcess({
        command: process.execPath,
        args: [GATEWAY_BIN, '--port', '0', '--time-scale', '0.01'],
        env: gatewayEnv(home, { TELEGRAM_BOT_TOKEN: TOKEN, HERMES_LOG_LEVEL: 'info' }),
        readyLine: /Hermes gateway listening on/,
        readyTimeoutMs: 30_000,
      });

    const tokens: string[] = [];
    const killDelays: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const gateway = await start();
      const fresh = 1 + Math.floor(random() * 3);
      for (let index = 0; index < fresh; index += 1) {
        const token = `m${run}-${index}`;
        tokens.push(token);
        const chat = CHATS[Math.floor(random() * CHATS.length)] ?? 101;
        telegram.pushMessage({ chatId: chat, text: `please acknowledge ${token}` });
      }
      const delay = Math.floor(random() * 700);
      killDelays.push(delay);
      await new Promise((resolve) => setTimeout(resolve, delay));
      gateway.kill('SIGKILL');
      await gateway.exited;
    }

    // The last start runs to completion: everything owed is answered.
    const last = await start();
    const expectedReply = (token: string) => `ack:${token}`;
    const started = Date.now();
    for (;;) {
      const answered = new Set(
        telegram.sent.map((message) => /ack:(m\d+-\d+)/.exec(message.text)?.[1]),
      );
      if (tokens.every((token) => answered.has(token))) break;
      if (Date.now() - started > 60_000) {
        const missing = tokens.filter((token) => !answered.has(token));
        throw new Error(
          `replies never delivered: ${missing.join(', ')}\n${last.stderr().slice(-4000)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Let anything still in flight land, then stop cleanly.
    await new Promise((resolve) => setTimeout(resolve, 500));
    last.kill('SIGTERM');
    expect((await last.exited).code).toBe(0);

    // 0 lost; a copy beyond the first only as a resend marked "may be a duplicate", and only
    // when a kill landed between a send and its delivery record.
    let duplicates = 0;
    for (const token of tokens) {
      const copies = telegram.sent.filter((message) => message.text.endsWith(expectedReply(token)));
      expect(copies.length, `replies for ${token}`).toBeGreaterThanOrEqual(1);
      const unmarked = copies.filter((message) => !message.text.startsWith(RECOVERED_MARKER));
      expect(unmarked.length, `unmarked replies for ${token}`).toBeLessThanOrEqual(1);
      duplicates += copies.length - 1;
    }
    expect(duplicates).toBeLessThanOrEqual(RUNS);
    // Nothing but the owed replies reached the chats.
    for (const message of telegram.sent) expect(message.text).toMatch(/ack:m\d+-\d+$/);

    // No user message stored twice, no turn started twice: exactly one fresh model call (no
    // resume note) per message; a resumed turn continues where it stood.
    const database = new Database(path.join(home, 'state.db'), { readonly: true });
    try {
      for (const token of tokens) {
        const stored = database
          .prepare(`SELECT count(*) AS n FROM messages WHERE role = 'user' AND content = ?`)
          .get(`please acknowledge ${token}`) as { n: number };
        expect(stored.n, `stored user messages for ${token}`).toBe(1);
      }
      const open = database
        .prepare(`SELECT count(*) AS n FROM delivery_obligations WHERE state NOT IN ('delivered')`)
        .get() as { n: number };
      expect(open.n).toBe(0);
    } finally {
      database.close();
    }
    for (const token of tokens) {
      const freshCalls = model.modelRequests.filter((request) => {
        const messages = (request.body as { messages: Message[] }).messages;
        const text = JSON.stringify(messages);
        const lastMessage = messages.at(-1);
        return (
          !text.includes(RESUME_NOTE) &&
          lastMessage?.role === 'user' &&
          lastMessage.content === `please acknowledge ${token}`
        );
      });
      expect(freshCalls.length, `fresh turns for ${token}`).toBeLessThanOrEqual(1);
    }
    const resumed = model.modelRequests.filter((request) =>
      JSON.stringify(request.body).includes(RESUME_NOTE),
    ).length;
    const claimedLines = (last.stderr().match(/claimed owed replies of the previous run/g) ?? [])
      .length;
    console.log(
      `chaos: ${resumed} resumed model call(s); the last start claimed owed replies ${claimedLines} time(s)`,
    );
    console.log(
      `chaos: ${RUNS} kills (seed ${SEED}, delays ${killDelays.join(',')} ms), ${tokens.length} messages, ${telegram.sent.length} sends, ${duplicates} marked resend(s), ${model.modelRequests.length} model calls`,
    );
  }, 600_000);
});
