/** Seconds a registration ticket stays valid, on the broker's monotonic clock. */
export const DEFAULT_TICKET_TTL_SECONDS = 30;
/** Seconds a dispatch waits for the controller's result before it cancels the command. */
export const DEFAULT_COMMAND_TIMEOUT_SECONDS = 30;
/** Deferred cancel frames kept per offline controller; the oldest are dropped beyond this. */
export const MAX_DEFERRED_CANCELS = 512;
/** The only wire protocol version this broker speaks. */
export const BROWSER_CONTROL_PROTOCOL_VERSION = 1;

/** Real browser actions any registered controller may negotiate. */
export const BROWSER_CONTROL_CAPABILITIES: readonly string[] = Object.freeze([
  'controller.noop',
  'browser_back',
  'browser_click',
  'browser_navigate',
  'browser_press',
  'browser_screenshot',
  'browser_scroll',
  'browser_snapshot',
  'browser_tab_activate',
  'browser_tabs',
  'browser_type',
]);

/** Privileged actions: only selectable while `browser.extension_control.developer_mode` is true. */
export const BROWSER_CONTROL_DEVELOPER_CAPABILITIES: readonly string[] = Object.freeze([
  'browser_cdp',
  'browser_evaluate',
]);

/** Not privileged: only a store-validated artifact id ever travels in the frame. */
export const BROWSER_CONTROL_ARTIFACT_CAPABILITIES: readonly string[] = Object.freeze([
  'browser_artifact_download',
  'browser_artifact_upload',
]);

/** The union of the three lists, for plugins that want every known name. */
export const BROWSER_CONTROL_ALL_CAPABILITIES: readonly string[] = Object.freeze([
  ...BROWSER_CONTROL_CAPABILITIES,
  ...BROWSER_CONTROL_DEVELOPER_CAPABILITIES,
  ...BROWSER_CONTROL_ARTIFACT_CAPABILITIES,
]);

export const FRAME_COMMAND = 'browser.controller.command';
export const FRAME_RESULT = 'browser.controller.result';
export const FRAME_CANCEL = 'browser.controller.cancel';
export const FRAME_HEARTBEAT = 'browser.controller.heartbeat';
export const FRAME_DETACH = 'browser.controller.detach';

/** The public subprotocol: the only one the server ever echoes. */
export const BROWSER_CONTROL_SUBPROTOCOL = 'hermes-browser-control-v1';
/** Prefix of the subprotocol entry that carries the single-use ticket. */
export const BROWSER_CONTROL_TICKET_PROTOCOL_PREFIX = 'hermes-browser-control-ticket.';

export const BROWSER_CONTROL_REGISTER_PATH = '/v1/browser-control/register';
export const BROWSER_CONTROL_WS_PATH = '/v1/browser-control/ws';
export const CAPABILITIES_PATH = '/v1/capabilities';

/** MV3 service workers die after 30 s idle and ping/pong is not activity, so talk every 20 s. */
export const BROWSER_CONTROL_KEEPALIVE_SECONDS = 20;
/** Transport-level ping interval; a socket that missed the previous pong is closed. */
export const BROWSER_CONTROL_PING_SECONDS = 30;
/** A socket write that has not finished within this bound is a slow write, not a failure. */
export const BROWSER_CONTROL_SEND_WAIT_SECONDS = 10;
/**
 * The largest WebSocket message either side of the controller socket accepts: 4 MiB, the
 * reference server's (aiohttp) default. Results are JSON (a page snapshot is well under this);
 * bytes travel as artifacts. A larger frame closes the socket with 1009 before it is buffered.
 */
export const MAX_CONTROLLER_FRAME_BYTES = 4 * 1024 * 1024;
/**
 * Inbound frames one controller socket may have waiting while an earlier one is in flight
 * (a cancel or detach waiting for the controller's send lock, or the attach). A peer past this
 * is flooding: its socket is closed with 1008.
 */
export const MAX_QUEUED_CONTROLLER_FRAMES = 1024;
/**
 * Inbound frames one controller socket may have handled per event-loop turn. Past it the socket
 * stops being read and the frames already received wait for the next turns, so a controller that
 * floods cannot hold the loop, while a burst of results (32 commands in flight) is handled in one
 * turn instead of one turn per frame.
 */
export const MAX_CONTROLLER_FRAMES_PER_TURN = 64;
/**
 * Bytes of replies (heartbeat echoes, acknowledgements, keepalives) a controller may leave
 * unread in the server's socket buffer: two maximum-size frames. A peer past this is not reading
 * while it keeps asking, and its socket is closed with 1008.
 */
export const MAX_UNREAD_CONTROLLER_BYTES = 2 * MAX_CONTROLLER_FRAME_BYTES;
/** Heartbeat nonces longer than this are ignored. */
export const MAX_HEARTBEAT_NONCE_LENGTH = 128;

export const TRANSPORT_FAMILY_LOCAL_API = 'local-api';
export const TRANSPORT_FAMILY_REMOTE_API = 'remote-api';
export const TRANSPORT_FAMILY_CLOUD = 'cloud-ticket-ws';

/** Exact texts of ticket failures (part of the contract). */
export const TICKET_UNKNOWN_MESSAGE = 'unknown ticket';
export const TICKET_CONSUMED_MESSAGE = 'ticket already consumed';
export const TICKET_EXPIRED_MESSAGE = 'ticket expired';
/** Raised by attach when the deferred-cancel flush through the new transport fails. */
export const DEFERRED_CANCEL_FLUSH_FAILED_MESSAGE =
  'browser controller reconnect could not flush deferred cancels';
/** Raised by the ws send bridge when the socket is no longer open. */
export const SOCKET_CLOSED_MESSAGE = 'browser controller socket is closed';
/** Refusal for ephemeral sessions. */
export const TEMPORARY_CHAT_MESSAGE =
  'Browser extension attach cannot be used in a temporary chat: attached browser extensions share persistent browser state. Start a normal chat (/new) to use extension control.';
