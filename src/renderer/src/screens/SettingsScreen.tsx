import { useEffect, useState, type FormEvent } from 'react';
import type { DesktopSettingsView, ProviderKeysUpdate } from '../../../shared/desktop-settings';
import type { AccountView } from '../../../shared/studio';
import { DailyCapForm } from '../components/DailyCapForm';
import { useCatalog } from '../stores/catalog-store';
import { useSettings } from '../stores/settings-store';
import { act, useUi } from '../stores/ui-store';
import { desktopSettings, studio } from '../transport';

/**
 * Which service the studio talks to (a remote one is checked live with GET /v1/account before it
 * can be chosen) and, in the desktop app, the AI provider keys kept in the system keychain.
 */
export function SettingsScreen() {
  const account = useCatalog((s) => s.account);
  const desktop = desktopSettings();
  const studioSettings = useSettings((s) => s.view);
  const [saved, setSaved] = useState<DesktopSettingsView | null>(null);
  const [restartNeeded, setRestartNeeded] = useState(false);
  useEffect(() => {
    if (desktop) act(async () => setSaved(await desktop.get()));
  }, []); // read once per visit
  const afterSave = (view: DesktopSettingsView, message: string) => {
    setSaved(view);
    setRestartNeeded(true);
    useUi.getState().notify(message);
  };

  return (
    <section aria-label="Settings">
      <p>
        Now using:{' '}
        <strong>
          {account
            ? account.mode === 'embedded'
              ? 'the embedded service on this computer'
              : account.serviceUrl
            : '…'}
        </strong>
      </p>
      {account?.mode === 'embedded' && studioSettings?.aiProviderFromEnvironment && (
        <p className="panel" role="note" aria-label="AI providers">
          AI providers are set by DROPSHOOT_* variables in the studio’s environment: tools routed to
          them make AI photos; the others make offline previews.
        </p>
      )}
      {account?.mode === 'embedded' && !studioSettings?.aiProviderFromEnvironment && (
        <p className="panel" role="note" aria-label="About preview mode">
          The embedded service makes <strong>offline previews</strong> on this computer (composites,
          not AI photos). For AI photos,{' '}
          {desktop
            ? 'save an AI provider key below (tools are routed in providers.json in the data folder), '
            : 'start the studio with AI provider keys (DROPSHOOT_FAL_KEY or DROPSHOOT_OPENAI_KEY, routes in providers.json), '}
          or check and use a remote service.
        </p>
      )}
      {restartNeeded && desktop && (
        <div className="banner" role="status">
          <span>Saved. Dropshoot uses the new settings after a restart; the queue is kept.</span>
          <button type="button" className="primary" onClick={() => act(() => desktop.relaunch())}>
            Restart now
          </button>
        </div>
      )}
      <DailyCapForm
        restartText={desktop ? 'after a restart' : 'when the studio is started again'}
        onSaved={(message) => {
          if (desktop) setRestartNeeded(true);
          useUi.getState().notify(message);
        }}
      />
      <RemoteServiceForm
        onUse={
          desktop
            ? (baseUrl, apiKey) =>
                act(async () =>
                  afterSave(
                    await desktop.save({ mode: 'remote', baseUrl, apiKey }),
                    `Dropshoot will use ${baseUrl}.`,
                  ),
                )
            : null
        }
      />
      {desktop && saved?.mode === 'remote' && (
        <div className="panel">
          <button
            type="button"
            onClick={() =>
              act(async () =>
                afterSave(
                  await desktop.save({ mode: 'embedded' }),
                  'Dropshoot will use the embedded service.',
                ),
              )
            }
          >
            Use the embedded service instead
          </button>
        </div>
      )}
      {desktop && saved && (
        <ProviderKeysForm
          view={saved}
          saveKeys={(providerKeys) => desktop.save({ providerKeys })}
          onSaved={(view) => afterSave(view, 'Provider keys saved in the system keychain.')}
        />
      )}
    </section>
  );
}

function RemoteServiceForm({
  onUse,
}: {
  onUse: ((baseUrl: string, apiKey: string) => void) | null;
}) {
  const [baseUrl, setBaseUrl] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [checked, setChecked] = useState<AccountView | null>(null);
  const check = (event: FormEvent) => {
    event.preventDefault();
    setChecked(null);
    act(async () => setChecked(await studio().call('connection.check', { baseUrl, apiKey })));
  };
  return (
    <form className="panel" aria-label="Remote service" onSubmit={check}>
      <div className="row">
        <label>
          Service URL
          <input
            type="url"
            required
            value={baseUrl}
            onChange={(e) => setBaseUrl(e.target.value)}
            placeholder="https://dropshoot.example.com"
          />
        </label>
        <label>
          API key
          <input
            type="password"
            required
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            autoComplete="off"
          />
        </label>
        <button type="submit">Check</button>
      </div>
      {checked && (
        <p className="ok" role="status">
          Connected as {checked.email}: {checked.diamondBalance} diamonds.{' '}
          {onUse ? (
            <button type="button" className="primary" onClick={() => onUse(baseUrl, apiKey)}>
              Use this service
            </button>
          ) : (
            'Start the studio with --remote URL --key KEY to switch.'
          )}
        </p>
      )}
    </form>
  );
}

/** Keys for the embedded core's AI providers; routes per tool live in providers.json (README). */
function ProviderKeysForm(props: {
  view: DesktopSettingsView;
  saveKeys(keys: ProviderKeysUpdate): Promise<DesktopSettingsView>;
  onSaved(view: DesktopSettingsView): void;
}) {
  const { view, saveKeys, onSaved } = props;
  const [fal, setFal] = useState('');
  const [openai, setOpenai] = useState('');
  const save = (event: FormEvent) => {
    event.preventDefault();
    act(async () => {
      const update = { ...(fal ? { fal } : {}), ...(openai ? { openai } : {}) };
      onSaved(await saveKeys(update));
      setFal('');
      setOpenai('');
    });
  };
  const forget = (name: 'fal' | 'openai') =>
    act(async () => onSaved(await saveKeys({ [name]: null })));
  if (!view.encryptionAvailable) {
    return (
      <p className="panel problem">
        This computer offers no keychain, so Dropshoot will not store AI provider keys. Use
        DROPSHOOT_FAL_KEY or DROPSHOOT_OPENAI_KEY instead.
      </p>
    );
  }
  return (
    <form className="panel" aria-label="AI provider keys" onSubmit={save}>
      <p className="muted">
        Real images need your own provider account; which tools use it is set in providers.json in
        the data folder. Keys stay in the system keychain.
      </p>
      <div className="row">
        <KeyField
          label="fal key"
          stored={view.providerKeys.fal}
          value={fal}
          onChange={setFal}
          onForget={() => forget('fal')}
        />
        <KeyField
          label="OpenAI-compatible key"
          stored={view.providerKeys.openai}
          value={openai}
          onChange={setOpenai}
          onForget={() => forget('openai')}
        />
        <button type="submit" disabled={!fal && !openai}>
          Save keys
        </button>
      </div>
    </form>
  );
}

function KeyField(props: {
  label: string;
  stored: boolean;
  value: string;
  onChange(value: string): void;
  onForget(): void;
}) {
  return (
    <>
      <label>
        {props.label} {props.stored ? '(stored)' : '(not set)'}
        <input
          type="password"
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
          autoComplete="off"
          placeholder={props.stored ? 'replace the stored key' : ''}
        />
      </label>
      {props.stored && (
        <button type="button" onClick={props.onForget}>
          Forget {props.label}
        </button>
      )}
    </>
  );
}
