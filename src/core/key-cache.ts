/**
 * Remembers which Authorization header belongs to which active key, so a poll costs no hash and
 * no SQLite lookup. Entries are dropped when the database changes under us: on an in-process
 * key change (`forget`), and when another process (the admin CLI revoking a key) commits, which
 * SQLite's `data_version` reveals; that is checked at most once per millisecond, so a key revoked
 * elsewhere stops working within a millisecond of the revoke's commit.
 */
import type { ReadableDB } from './db/types';
import { authenticate, type AuthenticatedKey } from './keys';

const MAX_ENTRIES = 10_000;
const VERSION_CHECK_MS = 1;

export class KeyCache {
  private readonly byHeader = new Map<string, AuthenticatedKey>();
  private version = -1;
  private checkedAt = 0;

  constructor(private readonly db: ReadableDB) {}

  /** The active key for a header, or throws Unauthorized (401). */
  authenticate(header: string | undefined): AuthenticatedKey {
    this.dropIfChanged();
    const cached = header === undefined ? undefined : this.byHeader.get(header);
    if (cached) return cached;
    const key = authenticate(this.db, header);
    if (this.byHeader.size >= MAX_ENTRIES) this.byHeader.clear();
    this.byHeader.set(header!, key);
    return key;
  }

  /** Called after this process changed keys (revoked one, say). */
  forget(): void {
    this.byHeader.clear();
  }

  private dropIfChanged(): void {
    const now = performance.now();
    if (now - this.checkedAt < VERSION_CHECK_MS) return;
    this.checkedAt = now;
    const { version } = this.db.prepare('SELECT data_version AS version FROM pragma_data_version').get() as { version: number };
    if (version !== this.version) {
      this.version = version;
      this.byHeader.clear();
    }
  }
}
