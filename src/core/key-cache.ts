/**
 * Remembers which Authorization header belongs to which active key, so a poll costs no hash and
 * no database lookup. Entries are dropped when keys may have changed: on an in-process key
 * change (`forget`), and when another process (the admin CLI, another `serve`) commits one, which
 * the store's change marker reveals (SQLite: `data_version`; PostgreSQL: a row bumped by every
 * key update). Every request is checked against a marker read sent at most `checkEveryMs` before
 * it started; when the last one is older, it waits for a fresh read (shared by the requests that
 * arrive meanwhile): so a key revoked elsewhere is refused by every request that starts later than
 * `checkEveryMs` plus one marker read after the revoke committed. Half-way through that time the
 * next read is sent in the background, so a steadily busy process's requests do not wait for it.
 * SQLite's marker is a local read (checked every millisecond); PostgreSQL's is a round trip to
 * the server, so it is read at most every 25 ms (40 reads a second per process, however busy).
 */
import type { Store } from './store/types';
import { authenticate, type AuthenticatedKey } from './keys';

const MAX_ENTRIES = 10_000;
/** How stale the cache may be, per dialect (see above). */
export const KEY_CHECK_MS = { sqlite: 1, postgres: 50 } as const;

export class KeyCache {
  private readonly byHeader = new Map<string, AuthenticatedKey>();
  private readonly checkEveryMs: number;
  private marker: number | string | undefined;
  /** When the newest marker read that has come back was sent (performance.now()). */
  private checkedAt = -Infinity;
  /** The marker read under way: requests that must wait share it instead of sending their own. */
  private checking: Promise<void> | undefined;

  constructor(
    private readonly store: Pick<Store, 'keys'> & Partial<Pick<Store, 'dialect'>>,
    opts: { checkEveryMs?: number } = {},
  ) {
    this.checkEveryMs = opts.checkEveryMs ?? KEY_CHECK_MS[store.dialect ?? 'sqlite'];
  }

  /** The active key for a header, or throws Unauthorized (401). */
  async authenticate(header: string | undefined): Promise<AuthenticatedKey> {
    await this.dropIfChanged();
    const cached = header === undefined ? undefined : this.byHeader.get(header);
    if (cached) return cached;
    const key = await authenticate(this.store, header);
    if (this.byHeader.size >= MAX_ENTRIES) this.byHeader.clear();
    this.byHeader.set(header!, key);
    return key;
  }

  /** Called after this process changed keys (revoked one, say). */
  forget(): void {
    this.byHeader.clear();
  }

  private dropIfChanged(): Promise<void> | undefined {
    const age = performance.now() - this.checkedAt;
    if (age < this.checkEveryMs) {
      // Still fresh enough; the next read goes out ahead, nobody waits for it.
      if (!this.checking && age >= this.checkEveryMs / 2) void this.check().catch(() => {});
      return undefined;
    }
    return this.checking ?? this.check();
  }

  private check(): Promise<void> {
    this.checking = this.readMarker().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async readMarker(): Promise<void> {
    // Timed from when the read is sent: what it returns is at least that fresh.
    const sent = performance.now();
    const marker = await this.store.keys.changeMarker();
    if (marker !== this.marker) {
      this.marker = marker;
      this.byHeader.clear();
    }
    this.checkedAt = Math.max(this.checkedAt, sent);
  }
}
