/**
 * The ready-set paginator's guards (issue 10 item 11), page sources shaped like the spec's
 * answer (`{ templateSets, nextCursor }`) that misbehave in the ways the spec leaves open.
 */
import { describe, expect, it } from 'vitest';
import { ApiError, MAX_READY_SET_PAGES, readAllReadySets } from '../../src/client';
import type { ReadyTemplateSetEntry } from '../../src/shared/api';

const set = (id: string) =>
  ({
    id,
    name: id,
    category: 'studio',
    coverUrl: '',
    shotCount: 1,
    shots: [],
  }) as ReadyTemplateSetEntry;

type Query = { limit?: number; cursor?: string; category?: string };
function source(
  answer: (
    query: Query,
    call: number,
  ) => { templateSets: ReadyTemplateSetEntry[]; nextCursor: string | null },
) {
  const calls: Query[] = [];
  return {
    calls,
    listReadySets: (query: Query = {}) => {
      calls.push(query);
      return Promise.resolve(answer(query, calls.length));
    },
  };
}

describe('readAllReadySets', () => {
  it('follows the cursor to the end and reads each page once', async () => {
    const pages: Record<
      string,
      { templateSets: ReadyTemplateSetEntry[]; nextCursor: string | null }
    > = {
      start: { templateSets: [set('a'), set('b')], nextCursor: 'p2' },
      p2: { templateSets: [set('c')], nextCursor: 'p3' },
      p3: { templateSets: [set('d')], nextCursor: null },
    };
    const s = source((q) => pages[q.cursor ?? 'start']!);
    const read = await readAllReadySets(s);
    expect(read).toMatchObject({ pages: 3, stop: 'end', complete: true });
    expect(read.templateSets.map((t) => t.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(s.calls).toEqual([
      { limit: 100 },
      { limit: 100, cursor: 'p2' },
      { limit: 100, cursor: 'p3' },
    ]);
  });

  it('stops at the second request when the service ignores the cursor (same page, same cursor)', async () => {
    const s = source(() => ({ templateSets: [set('a'), set('b')], nextCursor: 'c1' }));
    const read = await readAllReadySets(s);
    expect(read).toMatchObject({ pages: 2, stop: 'page_repeated', complete: false });
    expect(read.templateSets.map((t) => t.id)).toEqual(['a', 'b']);
  });

  it('stops when a cursor comes back that was already followed', async () => {
    // New sets on every page, but the cursors cycle: c1, c2, c1...
    const s = source((_q, call) => ({
      templateSets: [set(`s${call}`)],
      nextCursor: call % 2 ? 'c1' : 'c2',
    }));
    const read = await readAllReadySets(s);
    expect(read).toMatchObject({ pages: 3, stop: 'cursor_repeated', complete: false });
    expect(read.templateSets.map((t) => t.id)).toEqual(['s1', 's2', 's3']);
  });

  it(`bounds the read at ${MAX_READY_SET_PAGES} pages when every page is new`, async () => {
    const s = source((_q, call) => ({ templateSets: [set(`s${call}`)], nextCursor: `c${call}` }));
    const read = await readAllReadySets(s);
    expect(read).toMatchObject({ pages: MAX_READY_SET_PAGES, stop: 'page_limit', complete: false });
    expect(s.calls).toHaveLength(MAX_READY_SET_PAGES);
  });

  it('keeps each set once when pages overlap, and goes on while a page brings something new', async () => {
    const s = source((q) =>
      q.cursor === undefined
        ? { templateSets: [set('a'), set('b')], nextCursor: 'c1' }
        : { templateSets: [set('b'), set('c')], nextCursor: null },
    );
    const read = await readAllReadySets(s);
    expect(read.templateSets.map((t) => t.id)).toEqual(['a', 'b', 'c']);
    expect(read.stop).toBe('end');
  });

  it('asks again without a page size when the service refuses ours (its bounds are not in the spec)', async () => {
    const s = {
      calls: [] as Query[],
      listReadySets(query: Query = {}) {
        this.calls.push(query);
        if (query.limit !== undefined && query.limit > 50)
          return Promise.reject(new ApiError(400, 'limit must be at most 50'));
        return Promise.resolve({ templateSets: [set('a')], nextCursor: null });
      },
    };
    const read = await readAllReadySets(s);
    expect(read).toMatchObject({ pages: 2, stop: 'end', templateSets: [set('a')] });
    expect(s.calls).toEqual([{ limit: 100 }, {}]);
  });

  it('passes other failures on', async () => {
    const s = source(() => {
      throw new ApiError(401, 'Invalid API key');
    });
    await expect(
      readAllReadySets({ listReadySets: (q) => Promise.resolve().then(() => s.listReadySets(q)) }),
    ).rejects.toMatchObject({ status: 401 });
  });
});
