import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess } from '@hermes/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { BrowserControlBroker } from '../broker.js';
import { ControllerTimeout } from '../errors.js';
import { createScope } from '../scope.js';
import { type LoopbackGateway, startLoopbackGateway } from '../testing/loopback-gateway.js';
import { deriveApiPrincipal } from '../transport/principal.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const API_KEY = 'reattach-test-key-0123456789';
const SESSION = 'session-reattach';
/** Reattach cycles; the lost-frame race showed up in 4 of 10 across processes. */
const ROUNDS = 10;

let gateway: LoopbackGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('BrowserControllerClient reattach across processes', () => {
  it('receives the cancel the server flushes right behind the 101 of every reattach', {
    timeout: 60_000,
  }, async () => {
    const flags = () => ({ enabled: true, developerMode: false });
    // A short command timeout only makes each round quick: the deferred cancel is what the
    // timeout of a command whose controller is offline leaves behind.
    const broker = new BrowserControlBroker({ flags, commandTimeoutSeconds: 0.3 });
    gateway = await startLoopbackGateway({
      broker,
      flags,
      apiKey: API_KEY,
      sessions: new Set([SESSION]),
    });
    const controller = await spawnProcess({
      command: process.execPath,
      args: [
        '--conditions=@hermes/source',
        '--import',
        'tsx',
        path.join(here, 'test-fixtures', 'reattaching-controller.ts'),
        gateway.baseUrl,
        API_KEY,
        SESSION,
      ],
      cwd: path.resolve(here, '..', '..'),
      readyLine: 'connected',
    });
    const scope = () => {
      const attached = broker.scopeForSession({
        sessionId: SESSION,
        principalId: deriveApiPrincipal({ profile: 'default', apiKey: API_KEY }),
        transportFamily: 'local-api',
      });
      if (!attached) throw new Error('the controller is not attached');
      return createScope(attached);
    };

    const missed: number[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const running = broker.dispatch({ scope: scope(), action: 'controller.noop' });
      const outcome = running.then(
        () => 'completed',
        (error: unknown) => error,
      );
      const commandId = (await controller.waitForLine(new RegExp(`command ${round} (\\w+)`)))[1];
      // Socket lost while the command runs: the controller goes offline, the command times
      // out, and its cancel is deferred until the controller comes back.
      controller.kill('SIGUSR1');
      await controller.waitForLine(`closed ${round}`);
      expect(await outcome).toBeInstanceOf(ControllerTimeout);
      controller.kill('SIGUSR2');
      await controller.waitForLine(`reconnected ${round}`);
      // connect() resolves after a heartbeat echo the server sends after the flush, so a
      // cancel that was received has been reported by now.
      if (!controller.stdout().includes(`cancel ${commandId}`)) missed.push(round);
    }
    expect(missed, `rounds whose deferred cancel never reached onCancel`).toEqual([]);
    await controller.stop();
  });
});
