/** Results waiting for (or done with) review; focus and selection for keyboard culling. */
import { create } from 'zustand';
import type { Recipe, ResultView, ReviewState, StudioCommandResults } from '../../../shared/studio';
import { studio } from '../transport';

export type ReviewFilter = ReviewState | 'all';

type ResultsState = {
  results: Record<string, ResultView>;
  filter: ReviewFilter;
  focusedId: string | null;
  selected: Record<string, true>;
  loaded: boolean;
  load(): Promise<void>;
  apply(result: ResultView): void;
  setFilter(filter: ReviewFilter): void;
  focus(id: string | null): void;
  toggleSelected(id: string): void;
  /** Selects every id given (a shift-click range), keeping what was selected. */
  selectMany(ids: string[]): void;
  clearSelection(): void;
  review(ids: string[], review: ReviewState): Promise<{ unexported: number }>;
  redo(ids: string[], recipe?: Recipe): Promise<StudioCommandResults['review.redo']>;
};

export const useResults = create<ResultsState>()((set) => ({
  results: {},
  filter: 'pending',
  focusedId: null,
  selected: {},
  loaded: false,
  async load() {
    const { results } = await studio().call('results.list', { limit: 10_000 });
    set({ results: Object.fromEntries(results.map((r) => [r.id, r])), loaded: true });
  },
  apply: (result) => set((s) => ({ results: { ...s.results, [result.id]: result } })),
  setFilter: (filter) => set({ filter, selected: {} }),
  focus: (id) => set({ focusedId: id }),
  toggleSelected: (id) =>
    set((s) => {
      const selected = { ...s.selected };
      if (selected[id]) delete selected[id];
      else selected[id] = true;
      return { selected };
    }),
  selectMany: (ids) =>
    set((s) => ({
      selected: { ...s.selected, ...Object.fromEntries(ids.map((id) => [id, true as const])) },
    })),
  clearSelection: () => set({ selected: {} }),
  async review(ids, review) {
    if (ids.length === 0) return { unexported: 0 };
    // Optimistic: culling must feel instant; the engine's result.changed events confirm it.
    set((s) => ({
      results: {
        ...s.results,
        ...Object.fromEntries(
          ids.filter((id) => s.results[id]).map((id) => [id, { ...s.results[id]!, review }]),
        ),
      },
    }));
    const { unexported } = await studio().call('review.set', { ids, review });
    return { unexported };
  },
  async redo(ids, recipe) {
    // The old result is declined at once (the engine's event confirms): it must not be approved by a bulk action.
    set((s) => ({
      results: {
        ...s.results,
        ...Object.fromEntries(
          ids
            .filter((id) => s.results[id])
            .map((id) => [id, { ...s.results[id]!, review: 'rejected' as const }]),
        ),
      },
    }));
    return studio().call('review.redo', {
      resultIds: ids,
      ...(recipe ? { recipe } : {}),
    });
  },
}));

/** Results shown under the current filter, oldest first (the order they arrived in). */
export function visibleResults(
  results: Record<string, ResultView>,
  filter: ReviewFilter,
): ResultView[] {
  return Object.values(results)
    .filter((r) => filter === 'all' || r.review === filter)
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.n - b.n));
}
