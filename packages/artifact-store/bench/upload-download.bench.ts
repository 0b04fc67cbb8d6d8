/**
 * Upload + one-shot download through the real HTTP routes on loopback, against a plain
 * `fs.writeFile` + `fs.readFile` of the same bytes measured in the same run.
 *
 * The three variants run interleaved (one sample of each per round) so that load from other
 * processes on a shared machine hits them alike; the figure reported is the median per variant.
 * The route path is timed with two clients in this same process: `node:http` (lean, so the
 * figure is mostly the server) and `fetch` (undici, what most callers use).
 *
 * Run: pnpm --filter @hermes/artifact-store bench
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import {
  ARTIFACT_FILENAME_HEADER,
  ARTIFACT_UPLOAD_PATH,
  ArtifactRateLimiter,
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

function httpCall(options: {
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
        method: options.method,
        path: options.path,
        headers,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }),
        );
        response.on('error', reject);
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

  console.log('artifact upload + download through the routes vs fs.writeFile + fs.readFile');
  console.log('(median ms per round trip; ratio = routes / plain; interleaved rounds)');
  try {
    for (const benchCase of CASES) {
      const payload = randomBytes(benchCase.bytes);
      const expectLength = (length: number, what: string) => {
        if (length !== payload.byteLength) throw new Error(`${what}: ${length} bytes`);
      };

      const plain = async () => {
        await writeFile(plainFile, payload);
        expectLength((await readFile(plainFile)).byteLength, 'plain read');
      };
      const viaNodeHttp = async () => {
        const uploaded = await httpCall({
          port,
          method: 'POST',
          path: ARTIFACT_UPLOAD_PATH,
          body: payload,
        });
        if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}`);
        const receipt = JSON.parse(uploaded.body.toString('utf8')) as ArtifactWireReceipt;
        const downloaded = await httpCall({ port, method: 'GET', path: receipt.download_path! });
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

      const variants = { plain, viaNodeHttp, viaFetch };
      const samples: Record<keyof typeof variants, number[]> = {
        plain: [],
        viaNodeHttp: [],
        viaFetch: [],
      };
      for (let round = 0; round < WARMUP_ROUNDS + benchCase.rounds; round += 1) {
        for (const [name, run] of Object.entries(variants) as Array<
          [keyof typeof variants, () => Promise<void>]
        >) {
          const started = performance.now();
          await run();
          if (round >= WARMUP_ROUNDS) samples[name].push(performance.now() - started);
        }
      }
      const plainMedian = median(samples.plain);
      const nodeHttpMedian = median(samples.viaNodeHttp);
      const fetchMedian = median(samples.viaFetch);
      console.log(
        `${benchCase.label.padEnd(6)} plain ${plainMedian.toFixed(1).padStart(6)} ms | ` +
          `routes (node:http) ${nodeHttpMedian.toFixed(1).padStart(6)} ms = ${(nodeHttpMedian / plainMedian).toFixed(2)}x | ` +
          `routes (fetch) ${fetchMedian.toFixed(1).padStart(6)} ms = ${(fetchMedian / plainMedian).toFixed(2)}x ` +
          `(n=${benchCase.rounds})`,
      );
    }
  } finally {
    server.close();
    await rm(home, { recursive: true, force: true });
  }
}

await main();
