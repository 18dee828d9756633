/** Items of the batch queue and the budget, kept current by `item.changed` / `budget.changed`. */
import { create } from 'zustand';
import type { BudgetView, ItemView } from '../../../shared/studio';
import { studio } from '../transport';

type QueueState = {
  items: Record<string, ItemView>;
  budget: BudgetView | null;
  paused: boolean;
  loaded: boolean;
  load(): Promise<void>;
  applyItem(item: ItemView): void;
  setBudget(budget: BudgetView): void;
  setPaused(paused: boolean): Promise<void>;
  /** Generates again: costs diamonds. */
  retry(ids: string[]): Promise<void>;
  /** Exports results already paid for again: free. */
  exportAgain(ids: string[]): Promise<number>;
  cancel(ids: string[]): Promise<void>;
  moveToFront(ids: string[]): Promise<void>;
  /** Settles an uncertain submission: resubmitting may cost the price again. False: not taken. */
  resolveUncertain(id: string, action: 'resubmit' | 'fail'): Promise<boolean>;
};

export const useQueue = create<QueueState>()((set) => ({
  items: {},
  budget: null,
  paused: false,
  loaded: false,
  async load() {
    const [{ items, paused }, budget] = await Promise.all([
      studio().call('queue.list', { limit: 10_000 }),
      studio().call('budget.get', {}),
    ]);
    // Paused survives a reload: the engine's own setting, not a default.
    set({ items: Object.fromEntries(items.map((i) => [i.id, i])), budget, paused, loaded: true });
  },
  applyItem: (item) => set((s) => ({ items: { ...s.items, [item.id]: item } })),
  setBudget: (budget) => set({ budget }),
  async setPaused(paused) {
    await studio().call('queue.pause', { paused });
    set({ paused });
  },
  async retry(ids) {
    await studio().call('queue.retry', { ids });
  },
  async exportAgain(ids) {
    return (await studio().call('queue.exportAgain', { ids })).changed;
  },
  async cancel(ids) {
    await studio().call('queue.cancel', { ids });
  },
  async moveToFront(ids) {
    await studio().call('queue.moveToFront', { ids });
  },
  async resolveUncertain(id, action) {
    return (await studio().call('queue.resolveUncertain', { id, action })).changed > 0;
  },
}));

/** Items in queue order. */
export const selectOrderedItems = (s: QueueState): ItemView[] =>
  Object.values(s.items).sort((a, b) => a.position - b.position);
