/**
 * A browser-control gateway in its own process, with default settings: the broker and the
 * loopback gateway exactly as tests build them in-process. Usage:
 * `node --conditions=@hermes/source --import tsx loopback-gateway-process.ts <api key> <session>…`.
 * Prints `listening <base URL>` once it accepts connections, `closed <n>` when the n-th accepted
 * controller connection has been torn down (its frames handled, its disconnect run), and runs
 * until it is killed.
 */
import { BrowserControlBroker } from '../../broker.js';
import { startLoopbackGateway } from '../../testing/loopback-gateway.js';

const [apiKey, ...sessions] = process.argv.slice(2);
const flags = () => ({ enabled: true, developerMode: false });
const gateway = await startLoopbackGateway({
  broker: new BrowserControlBroker({ flags }),
  flags,
  apiKey,
  sessions: new Set(sessions),
});
const connections = gateway.connections;
const push = connections.push.bind(connections);
connections.push = (...added) => {
  for (const connection of added) {
    const number = connections.length + 1;
    void connection.closed.then(() => process.stdout.write(`closed ${number}\n`));
  }
  return push(...added);
};
process.stdout.write(`listening ${gateway.baseUrl}\n`);
