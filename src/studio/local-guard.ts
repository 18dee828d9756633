/**
 * The studio's HTTP contract answers only this machine's own pages: a foreign Host header (DNS
 * rebinding) or a foreign Origin (a web page posting to localhost) is refused.
 */
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export type GuardRefusal = { code: 'forbidden'; message: string };

/** Host without its port, or null when the header is not `name[:port]`. */
function hostName(host: string): string | null {
  const match = /^(\[[0-9a-f:]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(host);
  return match ? match[1]!.toLowerCase() : null;
}

export function refuseForeignRequest(headers: {
  host?: string;
  origin?: string;
}): GuardRefusal | null {
  const host = headers.host ?? '';
  const name = hostName(host);
  if (name === null || !LOCAL_HOSTS.has(name))
    return { code: 'forbidden', message: 'the studio answers only on localhost' };
  if (headers.origin !== undefined && headers.origin !== `http://${host}`)
    return { code: 'forbidden', message: 'cross-origin requests are refused' };
  return null;
}
