import { BRIDGE_VERSION } from '../version.js';
import { buildOpenRpcDocument } from './openrpc.js';

/** The exact text of the committed `openrpc.schema.json` (2-space JSON, trailing newline). */
export function renderOpenRpcDocument(): string {
  return `${JSON.stringify(buildOpenRpcDocument(BRIDGE_VERSION), null, 2)}\n`;
}
