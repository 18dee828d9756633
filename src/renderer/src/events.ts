/** Routes the engine's events to the stores that own the data. */
import { useCatalog } from './stores/catalog-store';
import { useFolders } from './stores/folders-store';
import { useQueue } from './stores/queue-store';
import { useResults } from './stores/results-store';
import { useUi } from './stores/ui-store';
import { studio } from './transport';

export function connectEvents(): () => void {
  return studio().subscribe((event) => {
    switch (event.type) {
      case 'item.changed':
        useQueue.getState().applyItem(event.data);
        break;
      case 'result.added':
      case 'result.changed':
        useResults.getState().apply(event.data);
        break;
      case 'budget.changed':
        useQueue.getState().setBudget(event.data);
        break;
      case 'folder.changed':
        useFolders.getState().apply(event.data);
        break;
      case 'batch.finished': {
        const { exported, failed } = event.data;
        useUi.getState().notify(`Batch finished: ${exported} exported, ${failed} failed`);
        void useCatalog
          .getState()
          .loadAccount()
          .catch(() => undefined);
        break;
      }
    }
  });
}
