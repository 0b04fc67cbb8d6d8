import { isIP } from 'node:net';

/** Throws when a navigation URL must not be opened; the same rule the legacy browser tool applies. */
export type NavigationUrlPolicy = (url: string) => void;

export class NavigationUrlRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

const METADATA_HOSTNAMES = new Set(['metadata.google.internal', 'metadata']);

/** Cloud metadata endpoints, by address (IPv6 in the canonical form `canonicalIpv6` gives). */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254',
  '169.254.170.2',
  '100.100.100.200',
  'fd00:ec2:0:0:0:0:0:254',
]);

/** The eight 16-bit groups of an IPv6 literal (`::`, an embedded dotted IPv4 tail), or null. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const octets = dotted[1].split('.').map(Number);
    const high = ((octets[0] ?? 0) << 8) | (octets[1] ?? 0);
    const low = ((octets[2] ?? 0) << 8) | (octets[3] ?? 0);
    text = `${text.slice(0, dotted.index)}${high.toString(16)}:${low.toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) =>
    part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return null;
  return [...left, ...new Array<number>(missing).fill(0), ...right];
}

function ipv4FromGroups(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The IPv4 address an IPv6 address stands for, when it carries one a host would reach as IPv4:
 * IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, the deprecated
 * IPv4-compatible `::a.b.c.d`, and the NAT64 well-known prefix `64:ff9b::a.b.c.d`.
 */
function embeddedIpv4(groups: readonly number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  const zeroFirstFour = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  if (zeroFirstFour && g4 === 0 && g5 === 0xffff) return ipv4FromGroups(g6, g7);
  if (zeroFirstFour && g4 === 0xffff && g5 === 0) return ipv4FromGroups(g6, g7);
  if (zeroFirstFour && g4 === 0 && g5 === 0 && (g6 !== 0 || g7 > 1)) return ipv4FromGroups(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return ipv4FromGroups(g6, g7);
  }
  return null;
}

/**
 * What a URL host names, normalised so that one address has one spelling: a hostname (lower
 * case, no trailing dot), an IPv4 address, or an IPv6 address as eight uncompressed groups — or
 * the IPv4 address an IPv6 literal embeds, so `[::ffff:169.254.169.254]` and `[::ffff:a9fe:a9fe]`
 * are judged as 169.254.169.254.
 */
function normaliseHost(
  hostname: string,
):
  | { kind: 'name'; host: string }
  | { kind: 'ipv4'; host: string }
  | { kind: 'ipv6'; host: string; groups: number[] } {
  const bare = hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (isIP(bare) === 4) return { kind: 'ipv4', host: bare };
  const groups = ipv6Groups(bare);
  if (groups === null) return { kind: 'name', host: bare };
  const ipv4 = embeddedIpv4(groups);
  if (ipv4 !== null) return { kind: 'ipv4', host: ipv4 };
  return { kind: 'ipv6', host: groups.map((group) => group.toString(16)).join(':'), groups };
}

/**
 * Default policy: only http(s) (and `about:blank`); cloud metadata endpoints and link-local
 * addresses (IPv4 169.254.0.0/16, IPv6 fe80::/10) are refused, however the address is spelled —
 * IPv6 literals are normalised first, and one that embeds an IPv4 address (mapped, translated,
 * compatible, NAT64) is judged as that IPv4 address. Private and loopback addresses (10.x,
 * 192.168.x, 127.x, IPv6 unique-local fc00::/7 and `::1`) stay allowed: people drive their own
 * intranet and development pages.
 */
export const defaultNavigationUrlPolicy: NavigationUrlPolicy = (url) => {
  if (url === 'about:blank') return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NavigationUrlRejected(`not a valid URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new NavigationUrlRejected(`scheme ${parsed.protocol} is not allowed`);
  }
  const host = normaliseHost(parsed.hostname);
  if (host.kind === 'name') {
    if (METADATA_HOSTNAMES.has(host.host)) {
      throw new NavigationUrlRejected(`${host.host} is a cloud metadata endpoint`);
    }
    return;
  }
  if (METADATA_ADDRESSES.has(host.host)) {
    throw new NavigationUrlRejected(`${parsed.hostname} is a cloud metadata endpoint`);
  }
  const linkLocal =
    host.kind === 'ipv4'
      ? host.host.startsWith('169.254.')
      : ((host.groups[0] ?? 0) & 0xffc0) === 0xfe80;
  if (linkLocal) throw new NavigationUrlRejected(`${parsed.hostname} is a link-local address`);
};
