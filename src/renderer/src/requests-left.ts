/** How today's requests are shown: as the studio counts them (`Budget.requestsToday`), never recomputed here. */
import type { BudgetView } from '../../shared/studio';

/** "the service’s cap, learned 2026-11-25": where the cap in use comes from when its 429 named it. */
export function serviceCapSourceText(namedOn: string): string {
  return `the service’s cap, learned ${namedOn}`;
}

/** "10", or "10 (the service’s cap, learned 2026-11-25)" when the cap in use is the one its 429 named. */
export function capInUseText(budget: BudgetView): string {
  return budget.serviceCapNamedOn !== null
    ? `${budget.capInUse} (${serviceCapSourceText(budget.serviceCapNamedOn)})`
    : String(budget.capInUse);
}

/** "3 of 10 (the service’s cap, learned 2026-11-25)"; null when no cap applies. */
export function requestsLeftText(budget: BudgetView | null): string | null {
  return budget?.requestsLeftToday != null
    ? `${budget.requestsLeftToday} of ${capInUseText(budget)}`
    : null;
}
