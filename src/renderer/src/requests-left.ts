/** How today's requests are shown: as the studio counts them (`Budget.requestsToday`), never recomputed here. */
import type { BudgetView } from '../../shared/studio';

/** "10", or "10 (the service’s cap, learned 2026-11-25)" when the cap in use is the one its 429 named. */
export function capInUseText(budget: BudgetView): string {
  return budget.serviceCapNamedOn !== null
    ? `${budget.capInUse} (the service’s cap, learned ${budget.serviceCapNamedOn})`
    : String(budget.capInUse);
}

/** "3 of 10 (the service’s cap, learned 2026-11-25)"; null when no cap applies. */
export function requestsLeftText(budget: BudgetView | null): string | null {
  return budget?.requestsLeftToday != null
    ? `${budget.requestsLeftToday} of ${capInUseText(budget)}`
    : null;
}
