/** The Settings screen's saved values: the daily request cap and AI providers set by environment. */
import { create } from 'zustand';
import type { StudioSettingsView } from '../../../shared/studio-settings';
import { studio } from '../transport';

type SettingsState = {
  /** null until loaded, or when this studio keeps no settings. */
  view: StudioSettingsView | null;
  load(): Promise<void>;
  saveDailyCap(dailyCap: number): Promise<StudioSettingsView>;
};

export const useSettings = create<SettingsState>()((set) => ({
  view: null,
  async load() {
    set({ view: await studio().settings() });
  },
  async saveDailyCap(dailyCap) {
    const view = await studio().saveSettings({ dailyCap });
    set({ view });
    return view;
  },
}));
