/**
 * A redo (or reprocess, or Generate again) queues a photo again as a new item: the board listed the
 * earlier item beside it as if it were a second photo (review uirev C4: 7 photos for 6 dropped).
 * One photo is one row: the latest item of a photo is its row, the earlier ones its history.
 */
import type { ItemView } from '../../shared/studio';

/** Where a photo was dropped in its batch. */
const placeKey = (item: ItemView) => `${item.batchId}\u0000${item.relativeDir}\u0000${item.name}`;
/** The same photo in the same batch: its bytes and where it was dropped. */
const photoKey = (item: ItemView) => `${item.sha256}\u0000${placeKey(item)}`;

const newestFirst = (a: ItemView, b: ItemView) =>
  b.createdAt.localeCompare(a.createdAt) || b.position - a.position;

export type Attempts = {
  /** The items that are a photo's row: each photo's latest attempt. */
  current: ItemView[];
  /** Earlier attempts of a photo, newest first, by the id of its current item. */
  earlier: Map<string, ItemView[]>;
};

/**
 * Each photo's latest attempt, and its earlier ones. A "skipped" item (the same photo dropped again,
 * nothing sent) is a row of its own: it replaces nothing. A bad file (not a photo, cut short) is
 * an attempt of whatever is dropped later in its place, whatever its bytes: its row asks for a
 * good copy, which counted as a second photo and left the failure for good (review rev29 D3).
 * `items` keep their order in `current`.
 */
export function attemptsOf(items: readonly ItemView[]): Attempts {
  const latestInPlace = new Map<string, ItemView>();
  for (const item of items) {
    if (item.state === 'skipped') continue;
    const seen = latestInPlace.get(placeKey(item));
    if (!seen || newestFirst(item, seen) < 0) latestInPlace.set(placeKey(item), item);
  }
  const byPhoto = new Map<string, ItemView[]>();
  for (const item of items) {
    if (item.state === 'skipped') continue;
    const later = latestInPlace.get(placeKey(item))!;
    const key = item.badFile && later !== item ? photoKey(later) : photoKey(item);
    byPhoto.set(key, [...(byPhoto.get(key) ?? []), item]);
  }
  const earlier = new Map<string, ItemView[]>();
  const replaced = new Set<string>();
  for (const attempts of byPhoto.values()) {
    if (attempts.length < 2) continue;
    const [latest, ...before] = [...attempts].sort(newestFirst);
    earlier.set(latest!.id, before);
    for (const item of before) replaced.add(item.id);
  }
  return { current: items.filter((i) => !replaced.has(i.id)), earlier };
}

const IN_FLIGHT: readonly ItemView['state'][] = [
  'queued',
  'uploading',
  'submitting',
  'processing',
  'downloading',
];

/**
 * What "Generate again…" on a photo's row sends: its latest attempt when that failed, was
 * cancelled or lost shots, and the failed shots of its earlier attempts, which no row offered once
 * a redo replaced them (review uirev30: only a disclosure without buttons listed them).
 */
export function retryIdsOf(item: ItemView, earlier: readonly ItemView[] = []): string[] {
  const own = item.state === 'failed' || item.state === 'cancelled' || item.failedShots.length > 0;
  return [
    ...(own && !item.badFile ? [item.id] : []),
    ...earlier
      .filter(
        (a, i) =>
          a.failedShots.length > 0 &&
          !IN_FLIGHT.includes(a.state) &&
          !askedAgain(a, [item, ...earlier.slice(0, i)]),
      )
      .map((a) => a.id),
  ];
}

/** The shots an attempt asked for: its recipe's `shotIds`, or every shot (the whole photo). */
function shotsAsked(attempt: ItemView): readonly string[] | 'all' {
  const ids = (attempt.recipe.request as { shotIds?: unknown }).shotIds;
  return Array.isArray(ids) ? ids.filter((s): s is string => typeof s === 'string') : 'all';
}

/**
 * Whether a newer attempt (`earlier` is newest first) asked again for a shot this one lost: its
 * retry would pay for it twice (review rev31 U2: after a whole-photo redo the row still offered,
 * and priced, the earlier attempt's failed shots).
 */
function askedAgain(attempt: ItemView, newer: readonly ItemView[]): boolean {
  return newer.some((n) => {
    const asked = shotsAsked(n);
    return asked === 'all' || attempt.failedShots.some((s) => asked.includes(s));
  });
}
