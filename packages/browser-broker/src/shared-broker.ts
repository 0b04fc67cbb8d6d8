import { BrowserControlBroker } from './broker.js';

let shared: BrowserControlBroker | undefined;

/**
 * The process-wide broker. The API-server transport and the dashboard transport must share it so
 * both families live in one registry, separated by transport family.
 */
export function getBrowserControlBroker(): BrowserControlBroker {
  shared ??= new BrowserControlBroker();
  return shared;
}
