/**
 * The reference controller client in its own process, driven by signals. Usage:
 * `node --conditions=@hermes/source --import tsx reattaching-controller.ts <base URL> <api key> <session>`.
 *
 * It connects (prints `connected`) and answers `controller.noop` commands only when they are
 * cancelled: each command prints `command <n> <command id>` and waits for its cancel, which prints
 * `cancel <command id>`. SIGUSR1 closes the socket (a recoverable disconnect; prints `closed <n>`),
 * SIGUSR2 reconnects under the same identity (prints `reconnected <n>`), SIGTERM detaches and exits.
 */
import { BrowserControllerClient } from '../controller-client.js';

const [baseUrl = '', apiKey = '', sessionId = ''] = process.argv.slice(2);
const print = (line: string) => process.stdout.write(`${line}\n`);

let commands = 0;
const controller = new BrowserControllerClient({
  baseUrl,
  apiKey,
  sessionId,
  controllerId: 'reattaching-controller',
  browserProfileId: 'chrome-default',
  capabilities: ['controller.noop'],
  handlers: {
    'controller.noop': (_arguments, { commandId, signal }) => {
      commands += 1;
      print(`command ${commands} ${commandId}`);
      return new Promise((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(new Error('cancelled')));
      });
    },
  },
  onCancel: (commandId) => print(`cancel ${commandId}`),
});

let closes = 0;
let reconnects = 0;
// One signal at a time, in order: a reconnect must not race the close before it.
let chain = Promise.resolve();
const serially = (task: () => Promise<void>) => {
  chain = chain.then(task).catch((error: unknown) => {
    print(`error ${error instanceof Error ? error.message : String(error)}`);
  });
};
process.on('SIGUSR1', () =>
  serially(async () => {
    await controller.close();
    closes += 1;
    print(`closed ${closes}`);
  }),
);
process.on('SIGUSR2', () =>
  serially(async () => {
    await controller.connect();
    reconnects += 1;
    print(`reconnected ${reconnects}`);
  }),
);
process.on('SIGTERM', () =>
  serially(async () => {
    await controller.detach().catch(() => {});
    process.exit(0);
  }),
);

await controller.connect();
print('connected');
// Signals alone do not keep a process alive, and between a close and a reconnect nothing else does.
setInterval(() => {}, 60_000);
