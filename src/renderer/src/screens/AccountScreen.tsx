import { useCallback, useEffect, useState } from 'react';
import { useCatalog } from '../stores/catalog-store';
import { capInUseText } from '../requests-left';
import { useQueue } from '../stores/queue-store';
import { errorText } from '../transport';

/** Reading the account: under way, failed (with the studio's words), or done. */
type Reading = { kind: 'loading' } | { kind: 'failed'; detail: string } | { kind: 'done' };

export function AccountScreen() {
  const account = useCatalog((s) => s.account);
  const budget = useQueue((s) => s.budget);
  const [reading, setReading] = useState<Reading>({ kind: 'loading' });
  // A failed read ends the wait and says so here, with a retry (it sat on "Loading…" under the
  // raw error in the banner while the service was down: review uirev B10).
  const load = useCallback(() => {
    setReading({ kind: 'loading' });
    useCatalog
      .getState()
      .loadAccount()
      .then(
        () => setReading({ kind: 'done' }),
        (error: unknown) => setReading({ kind: 'failed', detail: errorText(error) }),
      );
  }, []);
  useEffect(load, [load]);
  const failure =
    reading.kind === 'failed' ? (
      <div role="alert" className="panel">
        <p>
          {account
            ? 'The account could not be read again: the figures below are from the last reading.'
            : 'The account could not be read: the service did not answer.'}{' '}
          Check the connection or the service’s address in Settings, then try again.
        </p>
        <p>
          <button type="button" onClick={load}>
            Try again
          </button>
        </p>
        <details>
          <summary>Details</summary>
          <p className="muted small">{reading.detail}</p>
        </details>
      </div>
    ) : null;
  if (!account) return failure ?? <p aria-busy="true">Loading the account…</p>;
  return (
    <section aria-label="Account">
      {failure}
      <dl className="facts">
        <dt>Service</dt>
        <dd>
          {account.mode === 'embedded'
            ? 'Embedded (this computer, offline previews)'
            : account.serviceUrl}
        </dd>
        <dt>Account</dt>
        <dd>{account.email}</dd>
        <dt>Diamonds</dt>
        <dd>{account.diamondBalance}</dd>
        <dt>Plan</dt>
        <dd>
          {account.plan.planProductId} · {account.plan.status.replaceAll('_', ' ')}
          {account.plan.cancelAtPeriodEnd ? ' (ends at period end)' : ''}
        </dd>
        <dt>Renews</dt>
        <dd>{new Date(account.plan.renewsAt).toLocaleDateString()}</dd>
        <dt>Requests today</dt>
        <dd>
          {budget
            ? `${budget.requestsUsedToday}${budget.capInUse !== null ? ` of ${capInUseText(budget)}` : ''}`
            : '—'}
        </dd>
      </dl>
    </section>
  );
}
