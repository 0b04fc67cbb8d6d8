/**
 * Upload + one-shot download through the real HTTP routes on loopback, against a plain
 * `fs.writeFile` + `fs.readFile` of the same bytes measured in the same run.
 *
 * All variants run interleaved (one sample of each per round, the order rotated every round) so
 * that load from other processes on a shared machine hits them alike; the figure reported is the
 * median per variant. The route
 * path is timed with two clients in this same process: `node:http` on one kept-alive connection
 * (lean, so the figure is mostly the server) and `fetch` (undici, what most callers use). The
 * `node:http` figure is also split into its upload and its download half.
 *
 * `plain, warm buffer` does the baseline's work into a receive buffer whose pages are already
 * touched, to show how much of the baseline is first-touch page faults. Three more variants break
 * the route figure down, each measured in the same rounds:
 * - durable floor: what the store's guarantees cost without HTTP or the store's code — write,
 *   fsync, rename, read back, and two SHA-256 passes (upload and re-verification);
 * - store only: `storeStream()` from 64 KiB chunks plus `loadStream()` read to its end, no HTTP;
 * - HTTP only: the same client against a bare `node:http` server that discards the upload and
 *   answers the download from memory, no store.
 *
 * Every variant writes its own files, so one variant's rename or unlink never lands on a file
 * another variant is still writing (ext4 flushes a file renamed over an existing one early).
 * Minor page faults per round are printed beside the times: on a machine where first touches of
 * fresh memory are slow, whether a 10 MiB buffer is fresh or recycled moves a figure by tens of
 * milliseconds, the plain baseline's `readFile` buffer included.
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
  { label: '10 MiB', bytes: 10 * MIB, rounds: 18 },
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
  const floorFile = path.join(home, 'durable-floor.bin');
  const warmFile = path.join(home, 'plain-warm.bin');
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
  console.log(
    '(median ms per round trip; ratio = variant / plain; median minor page faults per round)',
  );
  let halves = { upload: 0, download: 0 };
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
      // The baseline's work with a receive buffer whose pages are already touched: what plain
      // costs when its `readFile` buffer is not fresh memory. For reading the ratios, not a target.
      const warmBuffer = Buffer.alloc(payload.byteLength);
      const plainWarm = async () => {
        await writeFile(warmFile, payload);
        const handle = await open(warmFile, 'r');
        try {
          let filled = 0;
          while (filled < warmBuffer.byteLength) {
            const { bytesRead } = await handle.read(
              warmBuffer,
              filled,
              warmBuffer.byteLength - filled,
              filled,
            );
            if (bytesRead === 0) break;
            filled += bytesRead;
          }
          expectLength(filled, 'warm read');
        } finally {
          await handle.close();
        }
      };
      const durableFloor = async () => {
        const temp = `${floorFile}.tmp`;
        createHash('sha256').update(payload).digest();
        const handle = await open(temp, 'w', 0o600);
        try {
          await handle.writeFile(payload);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, floorFile);
        const read = await readFile(floorFile);
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
        const { body } = await storeOnly.loadStream(receipt.artifactId, benchScope);
        let streamedBytes = 0;
        for await (const chunk of body) streamedBytes += chunk.byteLength;
        expectLength(streamedBytes, 'store-only load');
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
        const started = performance.now();
        const uploaded = await httpCall({
          agent,
          port,
          method: 'POST',
          path: ARTIFACT_UPLOAD_PATH,
          body: payload,
        });
        if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}`);
        const receipt = JSON.parse(uploaded.body.toString('utf8')) as ArtifactWireReceipt;
        const uploadedAt = performance.now();
        const downloaded = await httpCall({
          agent,
          port,
          method: 'GET',
          path: receipt.download_path!,
        });
        if (downloaded.status !== 200) throw new Error(`download answered ${downloaded.status}`);
        expectLength(downloaded.body.byteLength, 'download');
        halves = { upload: uploadedAt - started, download: performance.now() - uploadedAt };
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
        'plain, warm buffer': plainWarm,
        'durable floor': durableFloor,
        'store only': storeWithoutHttp,
        'HTTP only': httpWithoutStore,
        'routes (node:http)': viaNodeHttp,
        'routes (fetch)': viaFetch,
      };
      const samples = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
      const faults = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
      const halfSamples = { upload: [] as number[], download: [] as number[] };
      const entries = Object.entries(variants);
      for (let round = 0; round < WARMUP_ROUNDS + benchCase.rounds; round += 1) {
        // Each round starts one variant later, so no variant always follows the same one and
        // inherits its garbage (the memory it frees decides whether the next big buffer is fresh).
        const shift = round % entries.length;
        for (const [name, run] of [...entries.slice(shift), ...entries.slice(0, shift)]) {
          const faultsBefore = process.resourceUsage().minorPageFault;
          const started = performance.now();
          await run();
          const elapsed = performance.now() - started;
          if (round < WARMUP_ROUNDS) continue;
          samples.get(name)?.push(elapsed);
          faults.get(name)?.push(process.resourceUsage().minorPageFault - faultsBefore);
          if (name === 'routes (node:http)') {
            halfSamples.upload.push(halves.upload);
            halfSamples.download.push(halves.download);
          }
        }
      }
      const plainMedian = median(samples.get('plain') ?? []);
      const line = (name: string, value: number, pageFaults?: number) =>
        console.log(
          `  ${name.padEnd(20)} ${value.toFixed(1).padStart(7)} ms  ${(value / plainMedian).toFixed(2).padStart(6)}x${pageFaults === undefined ? '' : `  ${String(Math.round(pageFaults)).padStart(6)} faults`}`,
        );
      console.log(`${benchCase.label} (n=${benchCase.rounds})`);
      for (const [name, values] of samples) {
        line(name, median(values), median(faults.get(name) ?? []));
        if (name === 'routes (node:http)') {
          line('  upload half', median(halfSamples.upload));
          line('  download half', median(halfSamples.download));
        }
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
