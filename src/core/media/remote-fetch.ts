/**
 * Fetches a caller-supplied image URL with a timeout, a size cap and (in server mode) a guard
 * against requests to loopback, private and link-local addresses (SSRF). The guard runs inside
 * the socket's own DNS lookup, so a name that re-resolves to a private address is still refused.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export type RemoteFetchOptions = {
  allowPrivate: boolean;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
};

export class RemoteFetchError extends Error {
  override name = 'RemoteFetchError';
}

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'unicast';
}

function guardedLookup(allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const allowed = allowPrivate ? list : list.filter((a) => isPublicAddress(a.address));
      if (allowed.length === 0) {
        return callback(
          new RemoteFetchError(`${hostname} resolves to a private or local address`),
          '',
          0,
        );
      }
      if ((options as dns.LookupAllOptions).all) return callback(null, allowed as never, 0);
      const first = allowed[0]!;
      callback(null, first.address, first.family);
    });
  };
}

export async function fetchRemote(rawUrl: string, opts: RemoteFetchOptions): Promise<Buffer> {
  let url = new URL(rawUrl);
  for (let hop = 0; hop <= (opts.maxRedirects ?? 3); hop++) {
    const answer = await requestOnce(url, opts);
    if (answer.kind === 'body') return answer.body;
    url = new URL(answer.location, url);
  }
  throw new RemoteFetchError('too many redirects');
}

type Answer = { kind: 'body'; body: Buffer } | { kind: 'redirect'; location: string };

function requestOnce(url: URL, opts: RemoteFetchOptions): Promise<Answer> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new RemoteFetchError('only http and https URLs are supported'));
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!opts.allowPrivate && net.isIP(host) && !isPublicAddress(host)) {
    return Promise.reject(
      new RemoteFetchError('URLs to private, loopback or link-local addresses are refused'),
    );
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Answer>((resolve, reject) => {
    const req = client.get(
      url,
      {
        lookup: guardedLookup(opts.allowPrivate),
        timeout: opts.timeoutMs,
        headers: { accept: 'image/*' },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          return resolve({ kind: 'redirect', location: res.headers.location });
        }
        if (status !== 200) {
          res.resume();
          return reject(new RemoteFetchError(`the server answered ${status}`));
        }
        const declared = Number(res.headers['content-length'] ?? 0);
        if (declared > opts.maxBytes) {
          res.destroy();
          return reject(new RemoteFetchError(`the image is larger than ${opts.maxBytes} bytes`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes) {
            res.destroy();
            reject(new RemoteFetchError(`the image is larger than ${opts.maxBytes} bytes`));
          } else chunks.push(chunk);
        });
        res.on('end', () => resolve({ kind: 'body', body: Buffer.concat(chunks) }));
        res.on('error', (err) => reject(new RemoteFetchError(err.message)));
      },
    );
    // Whole-request deadline: `timeout` above only covers idle sockets, not a slow trickle.
    const deadline = setTimeout(
      () => req.destroy(new RemoteFetchError('timed out')),
      opts.timeoutMs,
    );
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new RemoteFetchError('timed out')));
    req.on('error', (err) =>
      reject(err instanceof RemoteFetchError ? err : new RemoteFetchError(err.message)),
    );
  });
}
