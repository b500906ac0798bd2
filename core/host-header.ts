/** The host name of an HTTP Host header, as the Host/Origin pins of `/mcp` and the REST API compare it. */

/** Loopback names every Host pin accepts. */
export const LOCAL_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** The lowercase host name of a Host header value: port and IPv6 brackets removed. */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']'));
  const colon = h.lastIndexOf(':');
  return colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}
