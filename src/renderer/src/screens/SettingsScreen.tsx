import { useState, type FormEvent } from 'react';
import type { AccountView } from '../../../shared/studio';
import { useCatalog } from '../stores/catalog-store';
import { act } from '../stores/ui-store';
import { studio } from '../transport';

/** Which service the studio talks to; a remote one is checked live with GET /v1/account. */
export function SettingsScreen() {
  const account = useCatalog((s) => s.account);
  const [baseUrl, setBaseUrl] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [checked, setChecked] = useState<AccountView | null>(null);
  const check = (event: FormEvent) => {
    event.preventDefault();
    setChecked(null);
    act(async () => setChecked(await studio().call('connection.check', { baseUrl, apiKey })));
  };
  return (
    <section aria-label="Settings">
      <p>
        Now using: <strong>{account ? (account.mode === 'embedded' ? 'the embedded service on this computer' : account.serviceUrl) : '…'}</strong>
      </p>
      <form className="panel" aria-label="Remote service" onSubmit={check}>
        <div className="row">
          <label>
            Service URL
            <input type="url" required value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} placeholder="https://dropshoot.example.com" />
          </label>
          <label>
            API key
            <input type="password" required value={apiKey} onChange={(e) => setApiKey(e.target.value)} autoComplete="off" />
          </label>
          <button type="submit">Check</button>
        </div>
        {checked && (
          <p className="ok" role="status">
            Connected as {checked.email}: {checked.diamondBalance} diamonds. {window.dropshoot ? 'Restart Dropshoot from the app menu to switch.' : 'Start the studio with --remote URL --key KEY to switch.'}
          </p>
        )}
      </form>
    </section>
  );
}
