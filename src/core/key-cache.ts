/**
 * Remembers which Authorization header belongs to which active key, so a poll costs no hash and
 * no database lookup. Entries are dropped when keys may have changed: on an in-process key
 * change (`forget`), and when another process (the admin CLI revoking a key) commits, which the
 * store's change marker reveals (SQLite: `data_version`); that is checked at most once per
 * millisecond, so a key revoked elsewhere stops working within a millisecond of the commit.
 */
import type { Store } from './store/types';
import { authenticate, type AuthenticatedKey } from './keys';

const MAX_ENTRIES = 10_000;
const VERSION_CHECK_MS = 1;

export class KeyCache {
  private readonly byHeader = new Map<string, AuthenticatedKey>();
  private marker: number | string | undefined;
  private checkedAt = 0;

  constructor(private readonly store: Pick<Store, 'keys'>) {}

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

  private async dropIfChanged(): Promise<void> {
    const now = performance.now();
    if (now - this.checkedAt < VERSION_CHECK_MS) return;
    this.checkedAt = now;
    const marker = await this.store.keys.changeMarker();
    if (marker !== this.marker) {
      this.marker = marker;
      this.byHeader.clear();
    }
  }
}
