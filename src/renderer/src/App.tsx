import { useEffect } from 'react';
import { Notice } from './components/Notice';
import { PreviewBanner } from './components/PreviewBanner';
import { useCatalog } from './stores/catalog-store';
import { AccountScreen } from './screens/AccountScreen';
import { BatchBoard } from './screens/BatchBoard';
import { ExportScreen } from './screens/ExportScreen';
import { FoldersScreen } from './screens/FoldersScreen';
import { LooksScreen } from './screens/LooksScreen';
import { ReviewScreen } from './screens/ReviewScreen';
import { SettingsScreen } from './screens/SettingsScreen';
import { useFolders } from './stores/folders-store';
import { useQueue } from './stores/queue-store';
import { useResults } from './stores/results-store';
import { useSettings } from './stores/settings-store';
import { act, SCREENS, useUi, type Screen } from './stores/ui-store';

const TITLES: Record<Screen, string> = {
  folders: 'Hot folders',
  batch: 'Batch',
  review: 'Review',
  export: 'Export',
  looks: 'Looks',
  account: 'Account',
  settings: 'Settings',
};

export function App() {
  const screen = useUi((s) => s.screen);
  const show = useUi((s) => s.show);
  const pending = useResults(
    (s) => Object.values(s.results).filter((r) => r.review === 'pending').length,
  );

  useEffect(() => {
    act(() =>
      Promise.all([
        useFolders.getState().load(),
        // The account read is a request of today's count: the budget is read after it, so
        // "Requests left today" includes it.
        useCatalog
          .getState()
          .loadAccount()
          .finally(() => useQueue.getState().load()),
        useResults.getState().load(),
        // Names instead of ids (ready shoots, looks) on every screen.
        useCatalog.getState().loadCatalog(),
        useCatalog.getState().loadLooks(),
        // Whether providers are set by environment (the preview banner) and the saved cap.
        useSettings.getState().load(),
      ]),
    );
  }, []);

  return (
    <div className="app">
      <nav className="nav" aria-label="Screens">
        <div className="brand">Dropshoot</div>
        {SCREENS.map((name) => (
          <button
            key={name}
            type="button"
            className="nav-item"
            aria-current={screen === name ? 'page' : undefined}
            onClick={() => show(name)}
          >
            {TITLES[name]}
            {name === 'review' && pending > 0 ? (
              <span className="badge" aria-label={`${pending} waiting`}>
                {pending}
              </span>
            ) : null}
          </button>
        ))}
      </nav>
      <main className="main" aria-labelledby="screen-title">
        <h1 id="screen-title">{TITLES[screen]}</h1>
        <PreviewBanner />
        <Notice />
        {screen === 'folders' && <FoldersScreen />}
        {screen === 'batch' && <BatchBoard />}
        {screen === 'review' && <ReviewScreen />}
        {screen === 'export' && <ExportScreen />}
        {screen === 'looks' && <LooksScreen />}
        {screen === 'account' && <AccountScreen />}
        {screen === 'settings' && <SettingsScreen />}
      </main>
    </div>
  );
}
