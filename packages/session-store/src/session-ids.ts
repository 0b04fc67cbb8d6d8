import { randomBytes } from 'node:crypto';

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** `YYYYMMDD_HHMMSS_<hex6>` in UTC, the id format of locally created sessions. */
export function newSessionId(now = new Date()): string {
  const date = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  const time = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  return `${date}_${time}_${randomBytes(3).toString('hex')}`;
}
