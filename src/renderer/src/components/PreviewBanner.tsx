import { useEffect, useState } from 'react';
import { useCatalog } from '../stores/catalog-store';
import { useSettings } from '../stores/settings-store';
import { act, useUi } from '../stores/ui-store';
import { desktopSettings } from '../transport';

/**
 * Said up front: on the embedded service with no AI provider, every result is an offline preview
 * (composited on this computer), not a generated photo. A provider counts wherever it is set: a
 * key saved in the desktop keychain, or DROPSHOOT_* variables in the engine's environment (which
 * only the studio can see, so it says so in its settings). One click to Settings changes that.
 */
export function usePreviewMode(): boolean {
  const account = useCatalog((s) => s.account);
  const fromEnvironment = useSettings((s) => s.view?.aiProviderFromEnvironment ?? false);
  const [providerKeys, setProviderKeys] = useState(false);
  useEffect(() => {
    const desktop = desktopSettings();
    if (desktop)
      act(async () => {
        const view = await desktop.get();
        setProviderKeys(view.providerKeys.fal || view.providerKeys.openai);
      });
  }, []);
  return account?.mode === 'embedded' && !providerKeys && !fromEnvironment;
}

export function PreviewBanner() {
  const preview = usePreviewMode();
  const screen = useUi((s) => s.screen);
  if (!preview || screen === 'settings') return null;
  return (
    <div className="banner banner-preview" role="note" aria-label="Preview mode">
      <span>
        <strong>Preview mode.</strong> Results are offline previews made on this computer, not AI
        photos, until an AI provider or a remote service is set.
      </span>
      <button type="button" onClick={() => useUi.getState().show('settings')}>
        Open Settings
      </button>
    </div>
  );
}
