import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  BOT_CHAT_TITLE,
  BOT_RELAY_DIR,
  LIST_SESSIONS_MAX_LIMIT,
  openBotRelay,
  openSessionStore,
  type SessionStore,
} from '@hermes/session-store';
import { seededRandom, tempHome } from '@hermes/testkit';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_BYTES } from '../src/contract/envelope.js';
import { METHOD_NAMES, type MethodName, SESSION_LIST_MAX_LIMIT } from '../src/contract/methods.js';
import {
  type RpcClient,
  type StdioBridge,
  scriptedModel,
  startStdioBridge,
  writeModelConfig,
} from './bridge-client.js';
import {
  checkReply,
  type FuzzContext,
  fuzzId,
  fuzzRequest,
  hasInvalidParams,
  judge,
  junkLine,
  type MemberExpectation,
  type Random,
  raw,
  short,
  toLine,
} from './params-fuzz-cases.js';

/**
 * A seeded generative fuzz of every method's params over stdio, against the built bin. The test
 * suite runs one fixed seed, so a red run is reproducible and caused by the change under test.
 * Set TUI_BRIDGE_FUZZ_SEED to another number to explore, or to `random` for a fresh one each run
 * (every failure names its seed and its request), and TUI_BRIDGE_FUZZ_LINES for a longer run
 * (with `--testTimeout`).
 */
const SEED_SETTING = process.env.TUI_BRIDGE_FUZZ_SEED ?? '20261204';
const SEED = SEED_SETTING === 'random' ? Math.floor(Math.random() * 2 ** 32) : Number(SEED_SETTING);
/** Lines written one at a time (each answered before the next), then lines written all at once. */
const SEQUENTIAL_LINES = Number(process.env.TUI_BRIDGE_FUZZ_LINES ?? 1200);
const BURST_LINES = 300;
/** A reply later than this is a hang (every request here is answered in milliseconds). */
const REPLY_WAIT_MS = 5000;
/** The id prefix of the test's own requests (set-up, settling), never a fuzzed id. */
const HELPER_ID = 'helper-';

type Expectation =
  | { kind: 'none' }
  | { kind: 'one'; member: MemberExpectation }
  | { kind: 'batch'; members: MemberExpectation[] };

/** The members an expectation covers: none, the one, or a batch's. */
function membersOf(expected: Expectation): MemberExpectation[] {
  if (expected.kind === 'none') return [];
  return expected.kind === 'one' ? [expected.member] : expected.members;
}

function expectationOf(line: string): Expectation {
  if (line.trim() === '') return { kind: 'none' };
  const parseError: Expectation = {
    kind: 'one',
    member: { id: null, verdict: 'parseError', method: undefined },
  };
  if (Buffer.byteLength(line) > MAX_MESSAGE_BYTES) return parseError;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return parseError;
  }
  if (!Array.isArray(value) || value.length === 0) {
    const member = judge(value); // an empty batch is one invalid request
    return member ? { kind: 'one', member } : { kind: 'none' };
  }
  const members = value.flatMap((item) => {
    const member = judge(item);
    return member ? [member] : [];
  });
  return members.length > 0 ? { kind: 'batch', members } : { kind: 'none' };
}

interface Snapshot {
  /** A digest of every row of every table but the FTS index's own (see `rowsOf`). */
  readonly rows: string;
  readonly sessions: number;
  readonly messages: number;
  readonly relay: string;
}

function relayState(root: string): string {
  const dir = path.join(root, BOT_RELAY_DIR);
  const list = (folder: string) => {
    try {
      return readdirSync(path.join(dir, folder)).sort();
    } catch {
      return [];
    }
  };
  const roster = path.join(dir, 'roster.json');
  return JSON.stringify({
    roster: existsSync(roster) ? readFileSync(roster, 'utf8') : null,
    outbox: list('outbox'),
    claimed: list('claimed'),
    replies: list('replies'),
  });
}

/**
 * Every row of every table, as a digest. Left out: the FTS index's tables and its watermark, which
 * the bridge's background indexing advances after earlier commits (a search answers the same
 * before and after: no content changes).
 */
function rowsOf(database: Database.Database): string {
  const hash = createHash('sha256');
  const tables = database
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'messages_fts%' ORDER BY name",
    )
    .pluck()
    .all() as string[];
  for (const table of tables) {
    const rows = database.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[];
    const kept = table === 'state_meta' ? rows.filter((row) => row.key !== FTS_WATERMARK) : rows;
    hash.update(
      `${table}\n${kept
        .map((row) => JSON.stringify(row))
        .sort()
        .join('\n')}\n`,
    );
  }
  return hash.digest('hex').slice(0, 16);
}

const FTS_WATERMARK = 'fts_indexed_through';

function snapshotOf(store: SessionStore, rows: Database.Database, root: string): Snapshot {
  let sessions = 0;
  let messages = 0;
  for (let offset = 0, more = true; more; offset += LIST_SESSIONS_MAX_LIMIT) {
    const page = store.listSessionsRich({
      limit: LIST_SESSIONS_MAX_LIMIT,
      offset,
      includeHidden: true,
      includeArchived: true,
      includePinned: false,
    });
    sessions += page.sessions.length;
    messages += page.sessions.reduce((total, row) => total + row.messageCount, 0);
    more = page.hasMore;
  }
  return { rows: rowsOf(rows), sessions, messages, relay: relayState(root) };
}

/** Reads the bridge's replies (events skipped) in the order it wrote them. */
class ReplyReader {
  #cursor: number;
  constructor(readonly client: RpcClient) {
    this.#cursor = client.lines.length;
  }

  /** The next reply line, or undefined after `timeoutMs`. */
  async next(timeoutMs = REPLY_WAIT_MS): Promise<string | undefined> {
    return this.client.waitFor(() => this.#take(), timeoutMs).catch(() => undefined);
  }

  /** Reply lines already read and not taken (none is expected when all was answered). */
  pending(): string[] {
    const found: string[] = [];
    for (let line = this.#take(); line !== undefined; line = this.#take()) found.push(line);
    return found;
  }

  #take(): string | undefined {
    while (this.#cursor < this.client.lines.length) {
      const line = this.client.lines[this.#cursor] as string;
      this.#cursor += 1;
      const value = JSON.parse(line) as { method?: unknown };
      if (Array.isArray(value)) return line;
      // Events, and the replies to the test's own set-up requests (ids `helper-…`), are not fuzz replies.
      if (value.method === 'event') continue;
      const id = (value as { id?: unknown }).id;
      if (typeof id === 'string' && id.startsWith(HELPER_ID)) continue;
      return line;
    }
    return undefined;
  }
}

/** Run ids started and not completed yet (turns this connection sees). */
function openRuns(client: RpcClient): string[] {
  const started = new Set<string>();
  for (const event of client.events) {
    const runId = event.payload.run_id;
    if (typeof runId !== 'string') continue;
    if (event.type === 'run.started') started.add(runId);
    if (event.type === 'run.completed') started.delete(runId);
  }
  return [...started];
}

describe('params fuzz', () => {
  it("answers every mutated request of every method once, with the contract's code, and stores nothing it refused", async () => {
    console.log(`params fuzz seed ${SEED} (replay with TUI_BRIDGE_FUZZ_SEED=${SEED})`);
    const random: Random = seededRandom(SEED);
    const home = await tempHome();
    const model = await scriptedModel(
      Array.from({ length: 600 }, () => ({ text: 'fuzzed reply' })),
    );
    await writeModelConfig(home.path, model.baseUrl);
    const bridge: StdioBridge = await startStdioBridge({ home: home.path });
    const { client } = bridge;
    let helpers = 0;
    /** A request of the test itself (never fuzzed): its result, or it throws. */
    const helper = async <T>(method: string, params: unknown): Promise<T> => {
      helpers += 1;
      let timer: NodeJS.Timeout | undefined;
      const reply = await Promise.race([
        client.call(method, params, `${HELPER_ID}${helpers}`),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new Error(
                  `seed ${SEED}: ${method} unanswered after ${REPLY_WAIT_MS} ms; stderr: ${short(bridge.stderr(), 2000)}`,
                ),
              ),
            REPLY_WAIT_MS,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      if (reply.error) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
      return reply.result as T;
    };

    // A conversation with a stored turn, a second live session and a closed one to point at.
    const seed = await client.request<{ session_id: string; stored_session_id: string }>(
      'session.create',
      { title: 'Seed chat' },
    );
    await client.request('prompt.submit', { session_id: seed.session_id, text: 'hello' });
    await client.waitForEvent((event) => event.type === 'run.completed');
    const other = await client.request<{ session_id: string }>('session.create', {});
    const closed = await client.request<{ session_id: string }>('session.create', {});
    await client.request('session.close', { session_id: closed.session_id });
    let created = 3;
    // Envelopes claimed by this front end, for bot_relay.deliver and bot_relay.reply to find.
    await client.request('bot_relay.roster.sync', { bots: [{ profile: 'default' }] });
    const relay = openBotRelay({ root: home.path });
    for (const message of ['one', 'two', 'three', 'four'])
      await relay.enqueue({ toProfile: 'default', from: 'fuzz peer', message });
    const claimed = await client.request<{ envelopes: { id: string }[] }>(
      'bot_relay.outbox.drain',
      {},
    );
    const claimedIds = claimed.envelopes.map((envelope) => envelope.id);

    const store = await openSessionStore({
      path: path.join(home.path, 'state.db'),
      checkpointIntervalMs: 0,
      recoverFtsOnOpen: false,
    });
    const rows = new Database(path.join(home.path, 'state.db'), { readonly: true });
    const failures: string[] = [];
    const stats = new Map<string, Record<string, number>>();
    /** Methods that got params the contract accepts (not only refusals). */
    const validFor = new Set<string>();
    const count = (member: MemberExpectation, outcome: string) => {
      if (member.verdict === 'valid' && member.method) validFor.add(member.method);
      const key = member.method ?? '(envelope)';
      const entry = stats.get(key) ?? {};
      entry[outcome] = (entry[outcome] ?? 0) + 1;
      stats.set(key, entry);
    };
    const fail = (line: string, notes: string, why: string) => {
      failures.push(`seed ${SEED}: ${why}\n  mutation: ${notes}\n  request: ${short(line, 600)}`);
    };

    let n = 0;
    /** The seed conversation's live id: a fuzzed session.close may close it, then it is resumed. */
    let liveId = seed.session_id;
    const context = async (): Promise<FuzzContext> => {
      const victim = await helper<{ session_id: string }>('session.create', {});
      created += 1;
      return {
        home: home.path,
        liveId,
        storedId: seed.stored_session_id,
        otherLiveId: other.session_id,
        closedLiveId: closed.session_id,
        victimId: victim.session_id,
        claimedIds,
      };
    };
    let shared = await context();

    /** One request object (or notification) for the next method in turn, mutated. */
    const nextMember = async (options: {
      uniqueId?: string;
    }): Promise<{ value: unknown; notes: string }> => {
      n += 1;
      const method = METHOD_NAMES[n % METHOD_NAMES.length] as MethodName;
      if (method === 'session.close') shared = await context();
      const fuzzed = fuzzRequest(random, method, { ...shared, liveId }, n);
      const request = fuzzed.request;
      const notes = [fuzzed.notes];
      const roll = random();
      if (roll < 0.12 && hasInvalidParams(request)) {
        delete request.id;
        notes.push('notification');
      } else {
        request.id = options.uniqueId ? `${options.uniqueId}-${n}` : fuzzId(random, n);
      }
      const envelope = random();
      if (envelope < 0.02) {
        request.jsonrpc = random() < 0.5 ? '1.0' : 2;
        notes.push('jsonrpc wrong');
      } else if (envelope < 0.04) {
        request.method = random() < 0.5 ? `${method} ` : method.toUpperCase();
        notes.push('method misspelled');
      }
      return { value: request, notes: notes.join('; ') };
    };

    /** A line: one request, or a batch mixing requests, notifications and junk members. */
    const nextLine = async (options: {
      uniqueId?: string;
      oversized?: boolean;
    }): Promise<{ line: string; notes: string }> => {
      if (options.oversized || (!options.uniqueId && random() < 0.015))
        return {
          line: junkLine(random, {
            oversized: options.oversized ?? false,
            liveId,
          }),
          notes: options.oversized ? 'a line past the limit' : 'not one JSON value',
        };
      if (random() >= 0.15) {
        const member = await nextMember(options);
        return { line: toLine(member.value), notes: member.notes };
      }
      if (random() < 0.05) return { line: '[]', notes: 'empty batch' };
      const size = 2 + Math.floor(random() * 4);
      const members: unknown[] = [];
      const notes: string[] = [];
      for (let index = 0; index < size; index += 1) {
        if (random() < 0.15 && !options.uniqueId) {
          members.push([1, 'x', null, [], {}, raw('1e309'), [[]]][Math.floor(random() * 7)]);
          notes.push('junk member');
        } else {
          const member = await nextMember(options);
          members.push(member.value);
          notes.push(member.notes);
        }
      }
      return { line: toLine(members), notes: `batch [${notes.join(' | ')}]` };
    };

    const settle = async () => {
      // A round trip: every event written before its reply has been read by then.
      const probe = await client.call(
        'slash.exec',
        { session_id: liveId, command: '/version' },
        `${HELPER_ID}probe-${n}`,
      );
      if (probe.error) {
        const resumed = await helper<{ session_id: string }>('session.resume', {
          session_id: seed.stored_session_id,
        });
        liveId = resumed.session_id;
      }
      await client.waitFor(() => (openRuns(client).length === 0 ? true : undefined), 15_000);
    };

    const started = performance.now();
    const reader = new ReplyReader(client);

    // Phase 1: one line at a time; each answered (or, for notifications, not) before the next.
    const oversizedAt = Math.floor(random() * SEQUENTIAL_LINES);
    for (let index = 0; index < SEQUENTIAL_LINES && failures.length < 10; index += 1) {
      const { line, notes } = await nextLine({ oversized: index === oversizedAt });
      const expected = expectationOf(line);
      // Taken after the line was built: building it may set up a session to close.
      const baseline = snapshotOf(store, rows, home.path);
      client.write(line);
      const members = membersOf(expected);
      let accepted = false;
      if (expected.kind !== 'none') {
        const replyLine = await reader.next();
        if (replyLine === undefined) {
          fail(line, notes, `no reply within ${REPLY_WAIT_MS} ms`);
          break;
        }
        const reply = JSON.parse(replyLine) as unknown;
        const replies = expected.kind === 'batch' ? reply : [reply];
        if (expected.kind === 'batch' && !Array.isArray(reply)) {
          fail(line, notes, `a batch answered with ${short(replyLine)}`);
          continue;
        }
        if (!Array.isArray(replies) || replies.length !== members.length) {
          fail(line, notes, `${members.length} replies expected, got ${short(replyLine)}`);
          continue;
        }
        members.forEach((member, position) => {
          const got = replies[position] as { result?: unknown; error?: { code: number } };
          const why = checkReply(member, got);
          if (why) fail(line, notes, why);
          const outcome = got?.error ? String(got.error.code) : 'ok';
          count(member, outcome);
          if (outcome === 'ok') {
            accepted = true;
            if (member.method === 'session.create') created += 1;
          }
        });
      }
      if (accepted) {
        await settle();
        continue;
      }
      // Refused (or a notification with bad params): nothing may have changed.
      const after = snapshotOf(store, rows, home.path);
      const changed = (Object.keys(after) as (keyof Snapshot)[]).filter(
        (key) => after[key] !== baseline[key],
      );
      if (changed.length > 0) {
        const what = changed.map((key) => `${key} ${baseline[key]} → ${after[key]}`).join('; ');
        fail(line, notes, `a refused request changed state.db or the relay: ${what}`);
      }
    }
    const sequentialMs = performance.now() - started;

    // Phase 2: lines written all at once; each id answered exactly once, in any order.
    const burstStarted = performance.now();
    const burstLines: { line: string; notes: string }[] = [];
    for (let index = 0; index < BURST_LINES; index += 1)
      burstLines.push(await nextLine({ uniqueId: `burst${index}` }));
    const expectedById = new Map<
      unknown,
      { member: MemberExpectation; line: string; notes: string }
    >();
    let nullIds = 0;
    for (const { line, notes } of burstLines) {
      const expected = expectationOf(line);
      const members = membersOf(expected);
      for (const member of members) {
        if (member.id === null) nullIds += 1;
        else expectedById.set(member.id, { member, line, notes });
      }
    }
    const burstReader = new ReplyReader(client);
    client.write(burstLines.map((entry) => entry.line).join('\n'));
    const seen = new Set<unknown>();
    let nullReplies = 0;
    while (seen.size < expectedById.size || nullReplies < nullIds) {
      const replyLine = await burstReader.next();
      if (replyLine === undefined) {
        const missing = [...expectedById.keys()].filter((id) => !seen.has(id));
        failures.push(
          `seed ${SEED}: burst: no reply within ${REPLY_WAIT_MS} ms for ids ${short(JSON.stringify(missing))} (${nullReplies}/${nullIds} null-id replies)`,
        );
        break;
      }
      const reply = JSON.parse(replyLine) as unknown;
      for (const item of Array.isArray(reply) ? reply : [reply]) {
        const id = (item as { id?: unknown }).id;
        if (id === null) {
          nullReplies += 1;
          continue;
        }
        const entry = expectedById.get(id);
        if (!entry) {
          failures.push(
            `seed ${SEED}: burst: a reply nobody asked for: ${short(JSON.stringify(item))}`,
          );
          continue;
        }
        if (seen.has(id)) {
          failures.push(
            `seed ${SEED}: burst: a second reply for id ${JSON.stringify(id)}: ${short(JSON.stringify(item))}`,
          );
          continue;
        }
        seen.add(id);
        const why = checkReply(entry.member, item);
        if (why) fail(entry.line, entry.notes, `burst: ${why}`);
        const outcome = (item as { error?: { code: number } }).error?.code;
        count(entry.member, outcome === undefined ? 'ok' : String(outcome));
        if (outcome === undefined && entry.member.method === 'session.create') created += 1;
      }
    }
    if (nullReplies > nullIds)
      failures.push(`seed ${SEED}: burst: ${nullReplies} null-id replies, expected ${nullIds}`);
    const burstMs = performance.now() - burstStarted;

    // After the storm: nothing else was answered, the bridge lives and answers a valid request.
    await settle();
    const stray = burstReader.pending();
    expect(
      bridge.child.exitCode,
      `seed ${SEED}: the bridge exited; stderr: ${bridge.stderr()}`,
    ).toBeNull();
    const listed = await client.request<{ sessions: unknown[] }>('session.list', {
      limit: SESSION_LIST_MAX_LIMIT,
    });
    expect(listed.sessions.length).toBeGreaterThan(0);
    const final = snapshotOf(store, rows, home.path);
    // Every conversation in the store is one a successful request made: a session.create, or a
    // delivered relay message (the hidden Bot Chat). Compressions continue a conversation.
    const botChats =
      store.getSessionByTitle(BOT_CHAT_TITLE, { includeHidden: true })?.hidden === 1 ? 1 : 0;
    if (final.sessions !== created + botChats)
      failures.push(
        `seed ${SEED}: ${final.sessions} stored conversations; successful requests made ${created} + ${botChats} Bot Chat`,
      );
    rows.close();
    await store.close();

    const summary = [...stats.entries()]
      .sort(([left], [right]) => left.localeCompare(right))
      .map(([method, outcomes]) => `  ${method}: ${JSON.stringify(outcomes)}`)
      .join('\n');
    console.log(
      `params fuzz seed ${SEED}: ${SEQUENTIAL_LINES} lines in ${Math.round(sequentialMs)} ms, ${BURST_LINES} at once in ${Math.round(burstMs)} ms, ${n} requests\n${summary}`,
    );
    expect(stray, 'replies nobody asked for').toEqual([]);
    expect(failures, `seed ${SEED}; stderr:\n${short(bridge.stderr(), 2000)}`).toEqual([]);
    // The generator reached every method with both refused and accepted params.
    for (const method of METHOD_NAMES) {
      const outcomes = stats.get(method) ?? {};
      expect(outcomes['-32602'] ?? 0, `${method} got no invalid params`).toBeGreaterThan(0);
      expect(validFor.has(method), `${method} got no valid params`).toBe(true);
    }
  });
});
