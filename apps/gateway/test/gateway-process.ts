import { mkdir, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ScriptedTurn,
  type SpawnedProcess,
  spawnProcess,
  startModelServer,
  tempHome,
} from '@hermes/testkit';
import { onTestFinished } from 'vitest';

export const GATEWAY_BIN = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'dist',
  'bin.js',
);

export interface StartedGateway {
  readonly process: SpawnedProcess;
  readonly url: string;
  readonly home: string;
  /** `fetch` against the gateway with the given path; `key` sets the bearer. */
  request(
    pathname: string,
    init?: RequestInit & { key?: string; json?: unknown },
  ): Promise<Response>;
  json<T = Record<string, unknown>>(
    pathname: string,
    init?: RequestInit & { key?: string; json?: unknown },
  ): Promise<{ status: number; body: T; headers: Headers }>;
}

/** The environment a gateway child gets: no inherited keys, the temp home, quiet console. */
export function gatewayEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR', 'SYSTEMROOT']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  return { ...env, HERMES_HOME: home, HERMES_LOG_LEVEL: 'debug', ...extra };
}

/** A named profile's home under `root` (`<root>/profiles/<name>`) holding `files` (0600). */
export async function makeProfile(
  root: string,
  name: string,
  files: Record<string, string>,
): Promise<string> {
  const home = path.join(root, 'profiles', name);
  await mkdir(home, { recursive: true, mode: 0o700 });
  for (const [file, text] of Object.entries(files))
    await writeFile(path.join(home, file), text, { mode: 0o600 });
  return home;
}

/** Writes `config.yaml` pointing the model at `baseUrl` (and anything else given). */
export async function writeConfig(home: string, yaml: string): Promise<void> {
  await writeFile(path.join(home, 'config.yaml'), yaml, { mode: 0o600 });
}

export function modelConfig(baseUrl: string, extra = ''): string {
  return `model:\n  default: test-model\n  base_url: ${baseUrl}\n  api_key: sk-test-model-key-0123456789\n${extra}`;
}

/** Starts the built bin on port 0 and waits for its banner. */
export async function startGateway(
  options: { home?: string; env?: NodeJS.ProcessEnv; args?: readonly string[] } = {},
): Promise<StartedGateway> {
  const home = options.home ?? (await tempHome()).path;
  const child = await spawnProcess({
    command: process.execPath,
    args: [GATEWAY_BIN, '--port', '0', ...(options.args ?? [])],
    env: gatewayEnv(home, options.env),
    readyLine: /Hermes gateway listening on (http:\/\/\S+)/,
    readyTimeoutMs: 20_000,
  });
  const match = await child.waitForLine(/Hermes gateway listening on (http:\/\/\S+)/);
  const url = match[1] ?? '';
  const request = (pathname: string, init: RequestInit & { key?: string; json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    if (init.key) headers.set('authorization', `Bearer ${init.key}`);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(init.json);
    }
    return fetch(`${url}${pathname}`, { ...init, headers, body: body ?? null });
  };
  return {
    process: child,
    url,
    home,
    request,
    async json(pathname, init) {
      const response = await request(pathname, init);
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      return { status: response.status, body: body as never, headers: response.headers };
    },
  };
}

/** Reads an SSE response into `{ event, data }` records (comments kept as `event: ':'`). */
export async function readEvents(response: Response): Promise<{ event: string; data: string }[]> {
  return parseEvents(await response.text());
}

/** An SSE stream's text as `{ event, data }` records (comments kept as `event: ':'`). */
export function parseEvents(text: string): { event: string; data: string }[] {
  const events: { event: string; data: string }[] = [];
  for (const block of text.split(/\n\n/)) {
    if (block.trim() === '') continue;
    if (block.startsWith(':')) {
      events.push({ event: ':', data: block });
      continue;
    }
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    events.push({ event, data: data.join('\n') });
  }
  return events;
}

/**
 * A gateway on a fresh home whose model is a testkit server playing `script`; both stop when
 * the test finishes.
 */
export async function startConfiguredGateway(script: ScriptedTurn[]) {
  const model = await startModelServer({ script });
  onTestFinished(() => model.close());
  const home = (await tempHome()).path;
  await writeConfig(home, modelConfig(model.baseUrl));
  const gateway = await startGateway({ home });
  onTestFinished(async () => {
    await gateway.process.stop();
  });
  return { model, gateway };
}

/**
 * Asks for a WebSocket upgrade (with the browser-control subprotocol and `protocols`) and returns
 * the HTTP answer that refused it; rejects if the upgrade is accepted.
 */
export function upgradeRefusal(
  url: string,
  protocols: readonly string[] = [],
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Protocol': ['hermes-browser-control-v1', ...protocols].join(', '),
      },
    });
    request.on('upgrade', (_response, socket) => {
      socket.destroy();
      reject(new Error('the upgrade was accepted'));
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}
