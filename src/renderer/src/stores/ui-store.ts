/** Which screen is open, the recipe a new folder starts from, and the last error in plain words. */
import { create } from 'zustand';
import type { RecipeInput } from '../../../shared/studio';
import { errorText } from '../transport';

export const SCREENS = [
  'folders',
  'batch',
  'review',
  'export',
  'looks',
  'account',
  'settings',
] as const;
export type Screen = (typeof SCREENS)[number];

/** A button next to a notice (Undo, Open Settings…). */
export type NoticeAction = { label: string; run(): void };

type UiState = {
  screen: Screen;
  draftRecipe: RecipeInput | null;
  error: string | null;
  notice: string | null;
  noticeAction: NoticeAction | null;
  show(screen: Screen): void;
  startFolderFrom(recipe: RecipeInput): void;
  clearDraft(): void;
  fail(error: unknown): void;
  notify(message: string, action?: NoticeAction): void;
  dismiss(): void;
};

export const useUi = create<UiState>()((set) => ({
  screen: 'folders',
  draftRecipe: null,
  error: null,
  notice: null,
  noticeAction: null,
  show: (screen) => set({ screen }),
  startFolderFrom: (recipe) => set({ draftRecipe: recipe, screen: 'folders' }),
  clearDraft: () => set({ draftRecipe: null }),
  fail: (error) => set({ error: errorText(error), notice: null, noticeAction: null }),
  notify: (notice, action) => set({ notice, error: null, noticeAction: action ?? null }),
  dismiss: () => set({ error: null, notice: null, noticeAction: null }),
}));

/** Runs a UI action, turning any failure into the error banner instead of an unhandled rejection. */
export function act(action: () => Promise<unknown>): void {
  action().catch((error: unknown) => useUi.getState().fail(error));
}
