import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGatewayLogger } from './logger.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const homes: string[] = [];

async function tempHome(): Promise<string> {
  const home = await mkdtemp(path.join(tmpdir(), 'gateway-logger-'));
  homes.push(home);
  return home;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(homes.splice(0).map((home) => rm(home, { recursive: true, force: true })));
});

describe('gateway logger', () => {
  it('writes the lines of one event-loop turn to stderr after that turn, as one write, in order', async () => {
    const home = await tempHome();
    const writes: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    const logs = createGatewayLogger({ home, level: 'info', console: 'json' });
    logs.logger.info('first');
    logs.logger.info('second');
    logs.logger.warn('third');
    // Nothing yet: a request's log line never holds up the answer written in the same turn.
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toHaveLength(1);
    const messages = (writes[0] ?? '')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).msg);
    expect(messages).toEqual(['first', 'second', 'third']);
    await logs.close();
  });

  it('writes pending lines to the log file when closed', async () => {
    const home = await tempHome();
    const logs = createGatewayLogger({ home, level: 'info', console: 'off' });
    logs.logger.info('just before close');
    await logs.close();
    const file = await readFile(path.join(home, 'logs', 'gateway.log'), 'utf8');
    expect(file).toContain('"msg":"just before close"');
  });

  it('still gets a line logged just before process.exit onto stderr', async () => {
    const home = await tempHome();
    // A process that logs and exits at once, as a fatal error path does, never closing the log.
    const script = `
      import { createGatewayLogger } from ${JSON.stringify(path.join(here, 'logger.ts'))};
      const logs = createGatewayLogger({ home: ${JSON.stringify(home)}, level: 'info', console: 'json' });
      logs.logger.fatal('last words');
      process.exit(3);
    `;
    const exited = await run(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: here,
      },
    ).catch((error: { code: number; stderr: string }) => error);
    expect('code' in exited ? exited.code : 0).toBe(3);
    expect(exited.stderr).toContain('"msg":"last words"');
  });
});
