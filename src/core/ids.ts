import { randomBytes } from 'node:crypto';

/** Unguessable, URL-safe ids: 128 bits of randomness behind a readable prefix. */
export function newId(prefix: string, bytes = 16): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}
