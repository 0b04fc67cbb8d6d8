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

/**
 * A base URL's scheme, lower case and without the colon (`'http'`, `'https'`), or `undefined`
 * when the text is not a URL. Leading and trailing spaces are ignored, as the URL parser does.
 */
export function schemeOf(baseUrl: string): string | undefined {
  // `URL.parse` arrived in Node 20.18; the package supports 20.12.
  return URL.canParse(baseUrl) ? new URL(baseUrl).protocol.slice(0, -1) : undefined;
}
