/**
 * Reads every ready template set, page by page, with guards: the spec names neither the cursor
 * parameter nor the page-size bounds of this endpoint, so a service that ignores our cursor
 * would otherwise hand back page one forever and spend the day's request cap in a second.
 */
import type { ReadyTemplateSetEntry } from '../shared/api';
import { ApiError, type ServiceClient } from './service-client';

/** Enough for 2,000 sets at 100 a page; a curated library is far smaller. */
export const MAX_READY_SET_PAGES = 20;
export const READY_SET_PAGE_SIZE = 100;

export type ReadySetsStop =
  /** The service said there is nothing more (no `nextCursor`). */
  | 'end'
  /** A `nextCursor` came back that was already followed: the service loops. */
  | 'cursor_repeated'
  /** A page held only sets already read: the service ignored the cursor. */
  | 'page_repeated'
  /** MAX_READY_SET_PAGES pages were read and there was still a cursor. */
  | 'page_limit';

export type ReadySetsRead = {
  templateSets: ReadyTemplateSetEntry[];
  /** Requests spent. */
  pages: number;
  stop: ReadySetsStop;
  /** Whether the list is known to be whole ('end'); otherwise it is every set that could be read. */
  complete: boolean;
};

export async function readAllReadySets(
  client: Pick<ServiceClient, 'listReadySets'>,
  options: { category?: string; pageSize?: number; maxPages?: number } = {},
): Promise<ReadySetsRead> {
  const maxPages = options.maxPages ?? MAX_READY_SET_PAGES;
  const base = options.category ? { category: options.category } : {};
  let limit: number | undefined = options.pageSize ?? READY_SET_PAGE_SIZE;
  const sets: ReadyTemplateSetEntry[] = [];
  const seenIds = new Set<string>();
  const followed = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    if (pages >= maxPages)
      return { templateSets: sets, pages, stop: 'page_limit', complete: false };
    let page: Awaited<ReturnType<ServiceClient['listReadySets']>>;
    try {
      page = await client.listReadySets({
        ...base,
        ...(limit !== undefined ? { limit } : {}),
        ...(cursor ? { cursor } : {}),
      });
    } catch (err) {
      // Page-size bounds are "not shown" for this endpoint: a service that refuses ours gets its default.
      if (!(err instanceof ApiError) || err.status !== 400 || limit === undefined || pages > 0)
        throw err;
      pages++;
      limit = undefined;
      continue;
    }
    pages++;
    const fresh = page.templateSets.filter((s) => !seenIds.has(s.id));
    if (page.templateSets.length > 0 && fresh.length === 0)
      return { templateSets: sets, pages, stop: 'page_repeated', complete: false };
    for (const set of fresh) {
      seenIds.add(set.id);
      sets.push(set);
    }
    const next = page.nextCursor;
    if (!next) return { templateSets: sets, pages, stop: 'end', complete: true };
    if (followed.has(next))
      return { templateSets: sets, pages, stop: 'cursor_repeated', complete: false };
    followed.add(next);
    cursor = next;
  }
}
