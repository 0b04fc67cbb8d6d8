import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Bytes hashed per event-loop turn: well under a millisecond of work each. */
export const HASH_SLICE_BYTES = 1024 * 1024;

/**
 * SHA-256 (hex) of a payload already in memory, hashed slice by slice with an event-loop turn in
 * between, so a 10 MiB payload never holds the loop for more than one slice.
 *
 * Why not WebCrypto's `subtle.digest`: in Node it first copies the whole input on the calling
 * thread, and the fresh 10 MiB allocation costs more there than the hash itself.
 */
export async function sha256HexInSlices(data: Uint8Array): Promise<string> {
  const hash = createHash('sha256');
  for (let offset = 0; offset < data.byteLength; offset += HASH_SLICE_BYTES) {
    if (offset > 0) await nextTurn();
    hash.update(data.subarray(offset, offset + HASH_SLICE_BYTES));
  }
  return hash.digest('hex');
}
