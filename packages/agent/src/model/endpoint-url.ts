/** Where a request goes, compared: scheme, host, port and path (case and trailing slashes aside). */
export function endpointOf(baseUrl: string): string {
  try {
    const url = new URL(baseUrl.trim());
    const host = url.host.replace(/\.$/, '').replace(/\.:/, ':');
    return `${url.protocol}//${host}${url.pathname.replace(/\/+$/, '')}${url.search}`;
  } catch {
    return baseUrl.trim();
  }
}
