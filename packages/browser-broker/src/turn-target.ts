/** The tab (and frame) a turn's browser commands should act on, for one controller. */
export interface TurnTarget {
  readonly controllerId: string;
  readonly tabId: number;
  readonly frameId: number | string | null;
}

export const BROWSER_TURN_PROTOCOL = 'hermes.browser.turn.v2';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Parses a "Browser Context Protocol" turn envelope from a user message. Only a usable envelope
 * yields a target: route `extension-controller`, availability `available`, a non-empty
 * controller id and a positive integer tab id. `document_generation` is never carried over.
 */
export function parseBrowserTurnTarget(userMessage: unknown): TurnTarget | null {
  if (typeof userMessage !== 'string') return null;
  let envelope: unknown;
  try {
    envelope = JSON.parse(userMessage);
  } catch {
    return null;
  }
  if (!isRecord(envelope) || envelope.protocol !== BROWSER_TURN_PROTOCOL) return null;
  const control = envelope.browser_control;
  if (!isRecord(control)) return null;
  if (control.route !== 'extension-controller' || control.availability !== 'available') return null;
  const controllerId =
    typeof control.controller_id === 'string' ? control.controller_id.trim() : '';
  if (controllerId === '') return null;
  const tabId = control.tab_id;
  if (typeof tabId !== 'number' || !Number.isInteger(tabId) || tabId <= 0) return null;
  const frame = control.frame_id;
  const frameId = typeof frame === 'number' || typeof frame === 'string' ? frame : null;
  return { controllerId, tabId, frameId };
}

/** Per-turn binding for the API server: sets the session's target from the envelope, or clears it. */
export function bindBrowserTurnTarget(options: {
  readonly broker: {
    setTurnTarget(sessionId: string, target: TurnTarget): void;
    clearTurnTarget(sessionId: string): void;
  };
  readonly sessionId: string | null | undefined;
  readonly userMessage: unknown;
}): void {
  if (!options.sessionId) return;
  const target = parseBrowserTurnTarget(options.userMessage);
  if (target) options.broker.setTurnTarget(options.sessionId, target);
  else options.broker.clearTurnTarget(options.sessionId);
}
