/** What the service offers (tools, models, venues, poses, ready shoots), the account and looks. */
import { create } from 'zustand';
import type { AccountView, CatalogView, LookView } from '../../../shared/studio';
import { studio } from '../transport';

type CatalogState = {
  catalog: CatalogView | null;
  account: AccountView | null;
  looks: LookView[];
  loadCatalog(): Promise<void>;
  loadAccount(): Promise<void>;
  loadLooks(): Promise<void>;
  saveLook(resultId: string, label: string): Promise<void>;
  deleteLook(id: string): Promise<void>;
};

export const useCatalog = create<CatalogState>()((set, get) => ({
  catalog: null,
  account: null,
  looks: [],
  async loadCatalog() {
    if (!get().catalog) set({ catalog: await studio().call('catalog.get', {}) });
  },
  async loadAccount() {
    set({ account: await studio().call('account.get', {}) });
  },
  async loadLooks() {
    set({ looks: await studio().call('looks.list', {}) });
  },
  async saveLook(resultId, label) {
    await studio().call('looks.save', { resultId, label });
    await get().loadLooks();
  },
  async deleteLook(id) {
    await studio().call('looks.delete', { id });
    set((s) => ({ looks: s.looks.filter((l) => l.id !== id) }));
  },
}));
