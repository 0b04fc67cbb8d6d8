import { describe, expect, it } from 'vitest';
import { BrowserControlBroker } from './broker.js';
import {
  BROWSER_CONTROL_KEEPALIVE_SECONDS,
  BROWSER_CONTROL_PING_SECONDS,
  BROWSER_CONTROL_PROTOCOL_VERSION,
  BROWSER_CONTROL_REGISTER_PATH,
  BROWSER_CONTROL_SEND_WAIT_SECONDS,
  BROWSER_CONTROL_SUBPROTOCOL,
  BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX,
  BROWSER_CONTROL_WS_PATH,
  CAPABILITIES_PATH,
  DEFAULT_COMMAND_TIMEOUT_SECONDS,
  DEFAULT_TICKET_TTL_SECONDS,
  FRAME_CANCEL,
  FRAME_COMMAND,
  FRAME_DETACH,
  FRAME_HEARTBEAT,
  FRAME_RESULT,
  MAX_DEFERRED_CANCELS,
  MAX_HEARTBEAT_NONCE_LENGTH,
} from './constants.js';

// These values are wire and timing contract shared with extensions already in the field; tests
// elsewhere inject shorter timings, so this is where a drift of a default would show.
describe('protocol contract constants', () => {
  it('keeps the reference timings and bounds', () => {
    expect(DEFAULT_TICKET_TTL_SECONDS).toBe(30);
    expect(DEFAULT_COMMAND_TIMEOUT_SECONDS).toBe(30);
    expect(MAX_DEFERRED_CANCELS).toBe(512);
    // MV3 service workers die after 30 s idle: the keepalive must come well inside that.
    expect(BROWSER_CONTROL_KEEPALIVE_SECONDS).toBe(20);
    expect(BROWSER_CONTROL_PING_SECONDS).toBe(30);
    expect(BROWSER_CONTROL_SEND_WAIT_SECONDS).toBe(10);
    expect(MAX_HEARTBEAT_NONCE_LENGTH).toBe(128);
  });

  it('uses those defaults in a broker built without options', () => {
    const broker = new BrowserControlBroker();
    expect(broker.ticketTtlSeconds).toBe(30);
    expect(broker.commandTimeoutSeconds).toBe(30);
  });

  it('keeps the reference names on the wire', () => {
    expect(BROWSER_CONTROL_PROTOCOL_VERSION).toBe(1);
    expect([FRAME_COMMAND, FRAME_RESULT, FRAME_CANCEL, FRAME_HEARTBEAT, FRAME_DETACH]).toEqual([
      'browser.controller.command',
      'browser.controller.result',
      'browser.controller.cancel',
      'browser.controller.heartbeat',
      'browser.controller.detach',
    ]);
    expect(BROWSER_CONTROL_SUBPROTOCOL).toBe('hermes-browser-control-v1');
    expect(BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX).toBe('hermes-browser-control-ticket.');
    expect(BROWSER_CONTROL_REGISTER_PATH).toBe('/v1/browser-control/register');
    expect(BROWSER_CONTROL_WS_PATH).toBe('/v1/browser-control/ws');
    expect(CAPABILITIES_PATH).toBe('/v1/capabilities');
  });
});
