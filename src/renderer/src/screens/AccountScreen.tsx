import { useEffect } from 'react';
import { useCatalog } from '../stores/catalog-store';
import { capInUseText } from '../requests-left';
import { useQueue } from '../stores/queue-store';
import { act } from '../stores/ui-store';

export function AccountScreen() {
  const account = useCatalog((s) => s.account);
  const budget = useQueue((s) => s.budget);
  useEffect(() => act(() => useCatalog.getState().loadAccount()), []);
  if (!account) return <p aria-busy="true">Loading the account…</p>;
  return (
    <section aria-label="Account">
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
