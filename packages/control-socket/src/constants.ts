/** The control-socket wire protocol this package speaks. Requests and replies carry it. */
export const CONTROL_PROTOCOL_VERSION = 1;

/** The socket file inside `$HERMES_HOME` when its path fits the platform limit. */
export const SOCKET_FILE_NAME = 'gateway.sock';

/** Written in `$HERMES_HOME` when the socket had to be bound elsewhere; holds the real path. */
export const SOCKET_POINTER_FILE_NAME = 'gateway.sock.path';

/**
 * Longest socket path we bind, in UTF-8 bytes. Linux allows 108 and macOS/BSD 104 bytes of
 * `sun_path` including the NUL terminator; 100 leaves margin on both.
 */
export const MAX_SOCKET_PATH_BYTES = 100;

/** A request line longer than this is dropped without a reply. */
export const MAX_REQUEST_LINE_BYTES = 64 * 1024;

/** A reply line longer than this is replaced by `RESPONSE_TOO_LARGE_ERROR`. */
export const MAX_RESPONSE_LINE_BYTES = 512 * 1024;

/**
 * Client deadline, and the server's per-connection read deadline: counted from the moment the
 * connection is accepted, not reset by each byte, so a client trickling its line is cut at it.
 */
export const DEFAULT_CONTROL_TIMEOUT_MS = 2000;

/**
 * How long a verb handler may take before the server answers for it with a timeout error and
 * closes the connection. Above the longest client wait a verb has (`rescan-profiles`, 8 s).
 */
export const DEFAULT_HANDLER_TIMEOUT_MS = 10_000;

/** Prefix of the fallback socket file bound in the temp folder for deep homes. */
export const FALLBACK_SOCKET_PREFIX = 'hermes-gw-';

/** Prefix of the Windows named pipe. */
export const WINDOWS_PIPE_PREFIX = '\\\\.\\pipe\\hermes-gateway-';

/** Hex characters of the home's SHA-256 kept in fallback socket and pipe names. */
export const HOME_HASH_LENGTH = 16;

/** The `kind` every gateway PID record and `identify` answer carries. */
export const GATEWAY_KIND = 'hermes-gateway';

/** Built-in verbs. */
export const IDENTIFY_VERB = 'identify';
export const STATUS_VERB = 'status';

/** Exact wire error strings (clients match on them). */
export const RESPONSE_SERIALIZATION_FAILED_ERROR = 'response serialization failed';
export const RESPONSE_TOO_LARGE_ERROR = 'response too large';
export const REQUEST_NOT_OBJECT_ERROR = 'request must be a JSON object';
export const UNKNOWN_VERB_ERROR_PREFIX = 'unknown verb: ';
export const UNSUPPORTED_PROTOCOL_ERROR_PREFIX = 'unsupported protocol: ';
/** `TimeoutError: <this><verb repr> did not answer within <n> ms` */
export const HANDLER_TIMEOUT_ERROR_PREFIX = 'TimeoutError: verb ';

/** Log lines (exact, from the reference). */
export const SERVER_START_FAILED_LOG = 'Gateway control socket failed to start (non-fatal): ';
export const SERVER_LISTENING_LOG = 'Gateway control socket listening at ';
export const PIPE_LISTENING_LOG = 'Gateway control pipe listening at ';
export const CONNECTION_HANDLER_ERROR_LOG = 'Control socket connection handler error';

/** Runtime files under the process home. */
export const PID_FILE_NAME = 'gateway.pid';
export const RUNTIME_LOCK_FILE_NAME = 'gateway.lock';
export const RUNTIME_STATUS_FILE_NAME = 'gateway_state.json';

/** A runtime-status record older than this no longer describes a live writer. */
export const RUNTIME_STATUS_STALE_AFTER_MS = 120_000;
