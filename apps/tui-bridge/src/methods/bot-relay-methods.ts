import type { Bridge } from '../bridge.js';

export function botRelayMethods(_bridge: Bridge) {
  return {};
}
