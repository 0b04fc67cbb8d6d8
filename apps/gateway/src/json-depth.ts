/**
 * How deep JSON from outside (an API request body, a webhook payload) may nest. JSON.parse reads
 * far deeper than JSON.stringify can write back (it overflows the stack near 10 000 levels), and
 * what a sender sends is stored, rendered into a prompt or sent on: refused at the edge instead.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects or arrays deeper than `limit` (walked without recursion). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  // Only objects and arrays are queued: a body's many strings and numbers cost no allocation.
  const pending: [object, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (depth > limit) return true;
    for (const child of Object.values(item))
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
  }
  return false;
}
