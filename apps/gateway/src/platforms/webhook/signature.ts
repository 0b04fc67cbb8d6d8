import { createHmac, timingSafeEqual } from 'node:crypto';

/** The deprecated V1 header: `sha256=<hex HMAC-SHA256 of the body>` (or the bare hex). */
export const SIGNATURE_V1_HEADER = 'x-webhook-signature';
/** V2: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` — replay-bounded by the timestamp. */
export const SIGNATURE_V2_HEADER = 'x-webhook-signature-v2';
/** How far a V2 timestamp may be from now (s). */
export const SIGNATURE_TOLERANCE_S = 300;
/** A route secret that turns signature checks off (dynamic routes: loopback senders only). */
export const INSECURE_NO_AUTH = 'INSECURE_NO_AUTH';

export type SignatureVerdict =
  | { readonly ok: true; readonly version: 'v1' }
  /** `signed`: the timestamp and the digest that matched — the same signed delivery sent again. */
  | { readonly ok: true; readonly version: 'v2'; readonly signed: string }
  | { readonly ok: false; readonly reason: string };

function hmacHex(secret: string, data: Buffer): string {
  return createHmac('sha256', secret).update(data).digest('hex');
}

function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given.trim().toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Builds a V2 header value (for senders and tests). */
export function signV2(secret: string, body: Buffer | string, timestampS: number): string {
  const data = Buffer.concat([Buffer.from(`${timestampS}.`), Buffer.from(body)]);
  return `t=${timestampS},v1=${hmacHex(secret, data)}`;
}

/** Builds a V1 header value. */
export function signV1(secret: string, body: Buffer | string): string {
  return `sha256=${hmacHex(secret, Buffer.from(body))}`;
}

/**
 * Checks a request's signature: V2 when its header is present (timestamp within the tolerance,
 * any `v1=` candidate matching), else V1. Comparisons are constant-time.
 */
export function verifySignature(input: {
  readonly secret: string;
  readonly body: Buffer;
  readonly v1?: string | undefined;
  readonly v2?: string | undefined;
  readonly nowS: number;
  readonly toleranceS?: number;
}): SignatureVerdict {
  if (input.v2 !== undefined) {
    let timestamp: number | undefined;
    const candidates: string[] = [];
    for (const part of input.v2.split(',')) {
      const [key, value] = part.split('=', 2).map((text) => text.trim());
      if (key === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
      else if (key === 'v1' && value) candidates.push(value);
    }
    if (timestamp === undefined || candidates.length === 0)
      return { ok: false, reason: 'malformed V2 signature' };
    if (Math.abs(input.nowS - timestamp) > (input.toleranceS ?? SIGNATURE_TOLERANCE_S))
      return { ok: false, reason: 'V2 signature timestamp outside the tolerance' };
    const expected = hmacHex(
      input.secret,
      Buffer.concat([Buffer.from(`${timestamp}.`), input.body]),
    );
    return candidates.some((candidate) => sameHex(expected, candidate))
      ? { ok: true, version: 'v2', signed: `${timestamp}:${expected}` }
      : { ok: false, reason: 'V2 signature mismatch' };
  }
  if (input.v1 !== undefined) {
    const given = input.v1.trim().replace(/^sha256=/i, '');
    return sameHex(hmacHex(input.secret, input.body), given)
      ? { ok: true, version: 'v1' }
      : { ok: false, reason: 'V1 signature mismatch' };
  }
  return { ok: false, reason: 'no signature header' };
}
