// Starts `model-server.ts` in its own process (as a provider runs) and talks to it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface SpawnedModelServer {
  readonly baseUrl: string;
  /** The bodies of the last `count` model requests, oldest first. */
  lastBodies(count: number): Promise<unknown[]>;
  close(): void;
}

/** `args`: the script mode of `model-server.ts` (`text`, `tools`, `loop <k>`). */
export async function spawnModelServer(args: readonly string[]): Promise<SpawnedModelServer> {
  const child = spawn(
    process.execPath,
    ['--conditions=@hermes/source', '--import', 'tsx', path.join(here, 'model-server.ts'), ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [baseUrl, lastUrl] = await new Promise<[string, string]>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /MODEL (\S+) LAST (\S+)/.exec(out);
      if (match?.[1] && match[2]) resolve([match[1], match[2]]);
    });
    child.once('exit', (code) => reject(new Error(`model server exited ${code}: ${out}`)));
  });
  return {
    baseUrl,
    lastBodies: async (count) => (await (await fetch(`${lastUrl}?n=${count}`)).json()) as unknown[],
    close: () => {
      child.kill('SIGTERM');
    },
  };
}
