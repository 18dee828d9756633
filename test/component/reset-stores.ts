/**
 * Every renderer store back to the state it was created with, whole (`replace`), so no test
 * sees what another left behind. A store added to the renderer is added to STORES here.
 */
import { useCatalog } from '../../src/renderer/src/stores/catalog-store';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { useQueue } from '../../src/renderer/src/stores/queue-store';
import { useResults } from '../../src/renderer/src/stores/results-store';
import { useSettings } from '../../src/renderer/src/stores/settings-store';
import { useUi } from '../../src/renderer/src/stores/ui-store';

type ResettableStore = { getInitialState(): object; setState(state: object, replace: true): void };

const STORES: readonly ResettableStore[] = [
  useCatalog,
  useFolders,
  useQueue,
  useResults,
  useSettings,
  useUi,
];

export function resetStores(): void {
  for (const store of STORES) store.setState(store.getInitialState(), true);
}
