/**
 * Upload + one-shot download through the real HTTP routes on loopback, against a plain
 * `fs.writeFile` + `fs.readFile` of the same bytes measured in the same run.
 *
 * All variants run interleaved (one sample of each per round) so that load from other processes
 * on a shared machine hits them alike; the figure reported is the median per variant. The route
 * path is timed with two clients in this same process: `node:http` on one kept-alive connection
 * (lean, so the figure is mostly the server) and `fetch` (undici, what most callers use).
 *
 * Three more variants break the route figure down, each measured in the same rounds:
 * - durable floor: what the store's guarantees cost without HTTP or the store's code — write,
 *   fsync, rename, read back, and two SHA-256 passes (upload and re-verification);
 * - store only: `storeStream()` from 64 KiB chunks plus `load()`, no HTTP;
 * - HTTP only: the same client against a bare `node:http` server that discards the upload and
 *   answers the download from memory, no store.
 *
 * Run: pnpm --filter @hermes/artifact-store bench
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { Agent, createServer, type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import {
  ARTIFACT_FILENAME_HEADER,
  ARTIFACT_UPLOAD_PATH,
  ArtifactRateLimiter,
  ArtifactStore,
  ArtifactStoreCache,
  type ArtifactWireReceipt,
  createArtifactRoutes,
} from '../src/index.js';

const MIB = 1024 * 1024;
const CASES = [
  { label: '1 MiB', bytes: MIB, rounds: 30 },
  { label: '10 MiB', bytes: 10 * MIB, rounds: 15 },
];
const WARMUP_ROUNDS = 3;

interface HttpResult {
  readonly status: number;
  readonly body: Buffer;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Reads a response into one buffer of its declared length, as `readFile` does with the size it
 * gets from `fstat`, so the client side of the route path costs what the baseline's read costs.
 */
function collectBody(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(response.headers['content-length'] ?? Number.NaN);
    const chunks: Buffer[] = [];
    const into = Number.isSafeInteger(declared) ? Buffer.allocUnsafe(declared) : null;
    let received = 0;
    response.on('data', (chunk: Buffer) => {
      if (into !== null && received + chunk.byteLength <= into.byteLength) {
        chunk.copy(into, received);
      } else {
        chunks.push(chunk);
      }
      received += chunk.byteLength;
    });
    response.on('end', () =>
      resolve(into !== null && received === into.byteLength ? into : Buffer.concat(chunks)),
    );
    response.on('error', reject);
  });
}

function httpCall(options: {
  agent: Agent;
  port: number;
  method: string;
  path: string;
  body?: Buffer;
}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (options.body !== undefined) {
      headers['content-type'] = 'image/png';
      headers['content-length'] = options.body.byteLength;
      headers[ARTIFACT_FILENAME_HEADER] = 'bench.png';
    }
    const outgoing = request(
      {
        host: '127.0.0.1',
        port: options.port,
        agent: options.agent,
        method: options.method,
        path: options.path,
        headers,
      },
      (response) => {
        collectBody(response).then(
          (body) => resolve({ status: response.statusCode ?? 0, body }),
          reject,
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

async function main(): Promise<void> {
  const home = await mkdtemp(path.join(tmpdir(), 'hermes-artifact-bench-'));
  const stores = new ArtifactStoreCache({ resolveProfileHome: () => home });
  const app = createArtifactRoutes({
    authenticate: () => ({ ok: true, principalId: 'principal:default:bench', profile: 'default' }),
    resolveTransportFamily: () => 'local-api',
    stores,
    rateLimiter: new ArtifactRateLimiter({ maxRequests: 1_000_000 }),
  });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const port = address.port;
  const baseUrl = `http://127.0.0.1:${port}`;
  const plainFile = path.join(home, 'plain.bin');
  // One kept-alive connection, as a real client reuses, so connection setup is not measured.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  // The HTTP-only reference: same client, same bytes, no store behind it.
  let servedBytes: Buffer = Buffer.alloc(0);
  const bareServer = createServer((incoming, outgoing) => {
    if (incoming.method === 'POST') {
      incoming.resume();
      incoming.on('end', () => {
        outgoing.writeHead(201, { 'content-type': 'application/json' });
        outgoing.end('{"download_path":"/bare"}');
      });
      return;
    }
    outgoing.writeHead(200, { 'content-length': servedBytes.byteLength });
    outgoing.end(servedBytes);
  });
  await new Promise<void>((resolve) => bareServer.listen(0, '127.0.0.1', resolve));
  const bareAddress = bareServer.address();
  if (bareAddress === null || typeof bareAddress === 'string') throw new Error('no TCP address');
  const barePort = bareAddress.port;
  const storeOnly = await ArtifactStore.open({ root: path.join(home, 'store-only') });
  const benchScope = { principalId: 'principal:default:bench', transportFamily: 'local-api' };

  console.log('artifact upload + download through the routes vs fs.writeFile + fs.readFile');
  console.log('(median ms per round trip; ratio = variant / plain; interleaved rounds)');
  try {
    for (const benchCase of CASES) {
      const payload = randomBytes(benchCase.bytes);
      servedBytes = payload;
      const expectLength = (length: number, what: string) => {
        if (length !== payload.byteLength) throw new Error(`${what}: ${length} bytes`);
      };

      const plain = async () => {
        await writeFile(plainFile, payload);
        expectLength((await readFile(plainFile)).byteLength, 'plain read');
      };
      const durableFloor = async () => {
        const temp = `${plainFile}.tmp`;
        createHash('sha256').update(payload).digest();
        const handle = await open(temp, 'w', 0o600);
        try {
          await handle.writeFile(payload);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, plainFile);
        const read = await readFile(plainFile);
        createHash('sha256').update(read).digest();
        expectLength(read.byteLength, 'durable read');
      };
      const storeWithoutHttp = async () => {
        async function* chunks() {
          for (let offset = 0; offset < payload.byteLength; offset += 64 * 1024) {
            yield payload.subarray(offset, offset + 64 * 1024);
          }
        }
        const receipt = await storeOnly.storeStream({
          body: chunks(),
          filename: 'bench.png',
          contentType: 'image/png',
          scope: benchScope,
        });
        const loaded = await storeOnly.load(receipt.artifactId, benchScope);
        expectLength(loaded.data.byteLength, 'store-only load');
      };
      const httpWithoutStore = async () => {
        const uploaded = await httpCall({
          agent,
          port: barePort,
          method: 'POST',
          path: '/bare',
          body: payload,
        });
        if (uploaded.status !== 201) throw new Error(`bare upload answered ${uploaded.status}`);
        const downloaded = await httpCall({ agent, port: barePort, method: 'GET', path: '/bare' });
        expectLength(downloaded.body.byteLength, 'bare download');
      };
      const viaNodeHttp = async () => {
        const uploaded = await httpCall({
          agent,
          port,
          method: 'POST',
          path: ARTIFACT_UPLOAD_PATH,
          body: payload,
        });
        if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}`);
        const receipt = JSON.parse(uploaded.body.toString('utf8')) as ArtifactWireReceipt;
        const downloaded = await httpCall({
          agent,
          port,
          method: 'GET',
          path: receipt.download_path!,
        });
        if (downloaded.status !== 200) throw new Error(`download answered ${downloaded.status}`);
        expectLength(downloaded.body.byteLength, 'download');
      };
      const viaFetch = async () => {
        const uploaded = await fetch(`${baseUrl}${ARTIFACT_UPLOAD_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'image/png', [ARTIFACT_FILENAME_HEADER]: 'bench.png' },
          body: payload,
        });
        if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}`);
        const receipt = (await uploaded.json()) as ArtifactWireReceipt;
        const downloaded = await fetch(`${baseUrl}${receipt.download_path}`);
        expectLength((await downloaded.arrayBuffer()).byteLength, 'download');
      };

      const variants = {
        plain,
        'durable floor': durableFloor,
        'store only': storeWithoutHttp,
        'HTTP only': httpWithoutStore,
        'routes (node:http)': viaNodeHttp,
        'routes (fetch)': viaFetch,
      };
      const samples = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
      for (let round = 0; round < WARMUP_ROUNDS + benchCase.rounds; round += 1) {
        for (const [name, run] of Object.entries(variants)) {
          const started = performance.now();
          await run();
          if (round >= WARMUP_ROUNDS) samples.get(name)?.push(performance.now() - started);
        }
      }
      const plainMedian = median(samples.get('plain') ?? []);
      console.log(`${benchCase.label} (n=${benchCase.rounds})`);
      for (const [name, values] of samples) {
        const value = median(values);
        console.log(
          `  ${name.padEnd(20)} ${value.toFixed(1).padStart(7)} ms  ${(value / plainMedian).toFixed(2).padStart(6)}x`,
        );
      }
    }
  } finally {
    agent.destroy();
    server.close();
    bareServer.close();
    await rm(home, { recursive: true, force: true });
  }
}

await main();
