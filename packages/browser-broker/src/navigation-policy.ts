import { isIP } from 'node:net';

/** Throws when a navigation URL must not be opened; the same rule the legacy browser tool applies. */
export type NavigationUrlPolicy = (url: string) => void;

export class NavigationUrlRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

const METADATA_HOSTS = new Set([
  'metadata.google.internal',
  'metadata',
  '169.254.169.254',
  '169.254.170.2',
  '100.100.100.200',
  'fd00:ec2::254',
]);

/**
 * Default policy: only http(s) (and `about:blank`); cloud metadata endpoints and the IPv4
 * link-local range are refused. Plain private addresses (10.x, 192.168.x) stay allowed: people
 * drive their own intranet pages.
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
  const host = parsed.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (METADATA_HOSTS.has(host))
    throw new NavigationUrlRejected(`${host} is a cloud metadata endpoint`);
  if (isIP(host) === 4 && host.startsWith('169.254.')) {
    throw new NavigationUrlRejected(`${host} is a link-local address`);
  }
};
