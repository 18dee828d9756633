/** Hot folders with their recipes and output folders. */
import { create } from 'zustand';
import type { FolderView, RecipeInput } from '../../../shared/studio';
import { studio } from '../transport';

type FoldersState = {
  folders: FolderView[];
  loaded: boolean;
  load(): Promise<void>;
  apply(folder: FolderView): void;
  add(input: {
    path: string;
    outputDir: string;
    recipe: RecipeInput;
    maxDiamonds?: number | null;
  }): Promise<FolderView>;
  remove(id: string): Promise<void>;
  setPaused(id: string, paused: boolean): Promise<void>;
  setRecipe(id: string, recipe: RecipeInput): Promise<void>;
  setCeiling(id: string, maxDiamonds: number | null): Promise<void>;
};

export const useFolders = create<FoldersState>()((set, get) => ({
  folders: [],
  loaded: false,
  async load() {
    set({ folders: await studio().call('folders.list', {}), loaded: true });
  },
  apply: (folder) =>
    set((s) => ({
      folders: s.folders.some((f) => f.id === folder.id)
        ? s.folders.map((f) => (f.id === folder.id ? folder : f))
        : [...s.folders, folder],
    })),
  async add(input) {
    const folder = await studio().call('folders.add', input);
    get().apply(folder);
    return folder;
  },
  async remove(id) {
    await studio().call('folders.remove', { id });
    set((s) => ({ folders: s.folders.filter((f) => f.id !== id) }));
  },
  async setPaused(id, paused) {
    get().apply(await studio().call('folders.pause', { id, paused }));
  },
  async setRecipe(id, recipe) {
    get().apply(await studio().call('folders.setRecipe', { id, recipe }));
  },
  async setCeiling(id, maxDiamonds) {
    get().apply(await studio().call('folders.setCeiling', { id, maxDiamonds }));
  },
}));
