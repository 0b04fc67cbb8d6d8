import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ModelServer, type ScriptedTurn, startModelServer } from '@hermes/testkit';
import { afterEach } from 'vitest';
import WebSocket from 'ws';
import type { EventEnvelope } from '../src/contract/envelope.js';

export const BRIDGE_BIN = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'dist',
  'bin.js',
);

export const TEST_TOKEN = 'test-token-0123456789abcdef';

export class RpcErrorReply extends Error {
  constructor(
    readonly code: number,
    readonly rpcMessage: string,
    readonly data: unknown,
  ) {
    super(`${code}: ${rpcMessage}`);
  }
}

type Message = Record<string, unknown>;

/** A JSON-RPC client over any line/message transport: requests, replies, events, raw lines. */
export class RpcClient {
  readonly lines: string[] = [];
  readonly events: EventEnvelope['params'][] = [];
  readonly #pending = new Map<string | number, { resolve: (value: Message) => void }>();
  readonly #waiters = new Set<() => void>();
  #nextId = 1;

  constructor(readonly write: (text: string) => void) {}

  /** Feed one incoming message (a line or a frame). */
  receive(text: string): void {
    this.lines.push(text);
    const message = JSON.parse(text) as Message | Message[];
    for (const item of Array.isArray(message) ? message : [message]) {
      if (item.method === 'event') this.events.push(item.params as EventEnvelope['params']);
      else if (
        item.id !== undefined &&
        item.id !== null &&
        this.#pending.has(item.id as string | number)
      ) {
        const pending = this.#pending.get(item.id as string | number);
        this.#pending.delete(item.id as string | number);
        pending?.resolve(item);
      }
    }
    for (const wake of [...this.#waiters]) wake();
  }

  /** Sends a request and resolves with the whole reply object. */
  call(method: string, params?: unknown, id: string | number = this.#nextId++): Promise<Message> {
    return new Promise((resolve) => {
      this.#pending.set(id, { resolve });
      this.write(
        JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }),
      );
    });
  }

  /** Sends a request; resolves with `result`, rejects with `RpcErrorReply`. */
  async request<T = Message>(method: string, params?: unknown): Promise<T> {
    const reply = await this.call(method, params);
    if (reply.error) {
      const error = reply.error as { code: number; message: string; data?: unknown };
      throw new RpcErrorReply(error.code, error.message, error.data);
    }
    return reply.result as T;
  }

  /** Resolves with the first event (past or future) matching `predicate`. */
  waitForEvent(
    predicate: (event: EventEnvelope['params']) => boolean,
    timeoutMs = 15_000,
    from = 0,
  ): Promise<EventEnvelope['params']> {
    return this.waitFor(() => this.events.slice(from).find(predicate), timeoutMs);
  }

  /** Resolves once `check` returns something other than undefined. */
  waitFor<T>(check: () => T | undefined, timeoutMs = 15_000): Promise<T> {
    const found = check();
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const wake = () => {
        const value = check();
        if (value === undefined) return;
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms; events: ${JSON.stringify(this.events.map((event) => event.type))}`,
          ),
        );
      }, timeoutMs);
      this.#waiters.add(wake);
    });
  }

  /** Events of one type for one session, in order. */
  eventsOf(type: string, sessionId?: string): EventEnvelope['params'][] {
    return this.events.filter(
      (event) => event.type === type && (sessionId === undefined || event.session_id === sessionId),
    );
  }
}

const started: { stop(): Promise<void> }[] = [];
const models: ModelServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((item) => item.stop()));
  await Promise.all(models.splice(0).map((server) => server.close()));
});

/** The testkit's scripted model server, closed when the test ends. */
export async function scriptedModel(script: readonly ScriptedTurn[]): Promise<ModelServer> {
  const server = await startModelServer({ script });
  models.push(server);
  return server;
}

/** The environment a bridge child gets: the temp home, nothing inherited that could leak keys. */
export function bridgeEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR'])
    if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, HERMES_HOME: home, ...extra };
}

export async function writeModelConfig(home: string, baseUrl: string, extra = ''): Promise<void> {
  await writeFile(
    path.join(home, 'config.yaml'),
    `model:\n  default: test-model\n  base_url: ${baseUrl}\n  api_key: sk-test-model-key-0123456789\n${extra}`,
    { mode: 0o600 },
  );
}

export interface StdioBridge {
  readonly child: ChildProcessWithoutNullStreams;
  readonly client: RpcClient;
  stderr(): string;
  /** Resolves with the exit code once the process ends. */
  readonly exited: Promise<number | null>;
  /** Closes the bridge's stdin (the front end went away). */
  endInput(): void;
  stop(): Promise<void>;
}

/** Starts the built bin over stdio and waits for `gateway.ready`. */
export async function startStdioBridge(options: {
  home: string;
  env?: NodeJS.ProcessEnv;
  args?: string[];
}): Promise<StdioBridge> {
  const child = spawn(process.execPath, [BRIDGE_BIN, ...(options.args ?? [])], {
    env: bridgeEnv(options.home, options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new RpcClient((text) => {
    if (!child.stdin.destroyed) child.stdin.write(`${text}\n`);
  });
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let index = buffer.indexOf('\n'); index !== -1; index = buffer.indexOf('\n')) {
      const line = buffer.slice(0, index);
      buffer = buffer.slice(index + 1);
      if (line.trim() !== '') client.receive(line);
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const bridge: StdioBridge = {
    child,
    client,
    stderr: () => stderr,
    exited,
    endInput: () => child.stdin.end(),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
  started.push(bridge);
  await client
    .waitForEvent((event) => event.type === 'gateway.ready', 20_000)
    .catch((error: unknown) => {
      throw new Error(`${String(error)}\nstderr: ${stderr}`);
    });
  return bridge;
}

export interface WsBridgeProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  stdout(): string;
  connect(token?: string): Promise<WsClient>;
  stop(): Promise<void>;
}

export interface WsClient {
  readonly client: RpcClient;
  readonly socket: WebSocket;
  close(): Promise<void>;
}

/** Starts the built bin as a WebSocket server on port 0 with the test token. */
export async function startWsBridge(options: {
  home: string;
  env?: NodeJS.ProcessEnv;
  args?: string[];
}): Promise<WsBridgeProcess> {
  const child = spawn(process.execPath, [BRIDGE_BIN, '--port', '0', ...(options.args ?? [])], {
    env: bridgeEnv(options.home, { HERMES_TUI_BRIDGE_TOKEN: TEST_TOKEN, ...options.env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line; stderr: ${stderr}`)),
      20_000,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening on (ws:\/\/\S+)/.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', () => reject(new Error(`exited before listening; stderr: ${stderr}`)));
  });
  const sockets: WebSocket[] = [];
  const process_: WsBridgeProcess = {
    child,
    url,
    stdout: () => stdout,
    async connect(token = TEST_TOKEN) {
      const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
      sockets.push(socket);
      const client = new RpcClient((text) => socket.send(text));
      socket.on('message', (data) => client.receive(data.toString()));
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
        socket.once('unexpected-response', (_request, response) =>
          reject(new Error(`HTTP ${response.statusCode}`)),
        );
      });
      await client.waitForEvent((event) => event.type === 'gateway.ready');
      return {
        client,
        socket,
        close: () =>
          new Promise<void>((resolve) => {
            if (socket.readyState === WebSocket.CLOSED) return resolve();
            socket.once('close', () => resolve());
            socket.close();
          }),
      };
    },
    async stop() {
      for (const socket of sockets) socket.terminate();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
  started.push(process_);
  return process_;
}
