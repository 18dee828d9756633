import { useEffect, useState, type FormEvent } from 'react';
import type { BudgetView } from '../../../shared/studio';
import { DEFAULT_DAILY_CAP, parseDailyCap } from '../../../shared/studio-settings';
import { serviceCapSourceText } from '../requests-left';
import { useQueue } from '../stores/queue-store';
import { useSettings } from '../stores/settings-store';
import { StudioCallError, errorText, studio } from '../transport';

/**
 * The daily request cap (requests per key and UTC day; the service does not report it), checked
 * when saved and kept for the engine's next start. Shows the cap in use now beside it: the
 * configured one, or the service's as its 429 named it when lower (`Budget.requestsToday`).
 */
export function DailyCapForm({
  restartText,
  onSaved,
}: {
  restartText: string;
  onSaved(message: string): void;
}) {
  const view = useSettings((s) => s.view);
  const budget = useQueue((s) => s.budget);
  const [text, setText] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [budgetProblem, setBudgetProblem] = useState<string | null>(null);
  useEffect(() => {
    if (!view)
      void useSettings
        .getState()
        .load()
        .catch(() => undefined);
  }, [view]);
  useEffect(() => {
    // Opened before the queue was loaded: the cap in use is read on its own (events keep it current).
    if (!budget)
      void studio()
        .call('budget.get', {})
        .then((b) => {
          setBudgetProblem(null);
          useQueue.getState().setBudget(b);
        })
        .catch((error: unknown) => setBudgetProblem(errorText(error)));
  }, [budget]);
  if (!view) return null; // this studio keeps no settings (a test harness)
  const shown = text ?? String(view.dailyCap ?? DEFAULT_DAILY_CAP);

  const save = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseDailyCap(shown);
    if (!parsed.ok) return setProblem(parsed.message);
    setProblem(null);
    useSettings
      .getState()
      .saveDailyCap(parsed.value)
      .then((saved) => {
        setText(null);
        const flag =
          saved.dailyCapFromFlag !== null
            ? ` Until then --daily-cap ${saved.dailyCapFromFlag}, given at start, wins.`
            : '';
        onSaved(`Daily cap saved: ${saved.dailyCap} requests a day, used ${restartText}.${flag}`);
      })
      .catch((error: unknown) =>
        setProblem(
          error instanceof StudioCallError ? error.message : `Not saved: ${errorText(error)}`,
        ),
      );
  };

  return (
    <form className="panel" aria-label="Daily request cap" onSubmit={save} noValidate>
      <div className="row">
        <label>
          Requests a day (daily cap)
          <input
            inputMode="numeric"
            value={shown}
            onChange={(e) => {
              setText(e.target.value);
              setProblem(null);
            }}
            aria-invalid={problem !== null}
            aria-describedby="daily-cap-help"
          />
        </label>
        <button type="submit">Save cap</button>
      </div>
      {problem && (
        <p className="problem" role="alert">
          {problem}
        </p>
      )}
      <p className="muted" id="daily-cap-help">
        Requests the studio may send per API key and UTC day ({DEFAULT_DAILY_CAP} unless set); it
        counts its own and stops sending at the cap. In use now:{' '}
        <strong data-testid="daily-cap-in-use">
          {!budget
            ? budgetProblem !== null
              ? `not read (${budgetProblem})`
              : '…'
            : budget.capInUse === null
              ? 'no cap'
              : `${budget.capInUse} a day`}
        </strong>
        {budget ? capSource(budget, view.dailyCapFromFlag) : ''}
        {/* The cap above beside "no cap" read as a contradiction (review uirev C7): say why. */}
        {budget?.mode === 'embedded' && budget.capInUse === null
          ? `: the embedded service (this computer) sends no request over the network, so none is counted; the cap above (${shown}) is used when the studio works with a remote service`
          : ''}
        .
      </p>
    </form>
  );
}

/**
 * Where the cap in use comes from: the service's 429 (then the configured cap beside it, which it
 * is below) or `--daily-cap`; nothing when it is the saved setting.
 */
function capSource(budget: BudgetView, fromFlag: number | null): string {
  const configured =
    fromFlag !== null
      ? `--daily-cap ${fromFlag} given at start`
      : `your setting ${budget.dailyCap ?? 'none'}`;
  if (budget.serviceCapNamedOn !== null)
    return ` (${serviceCapSourceText(budget.serviceCapNamedOn)}; ${configured})`;
  return fromFlag !== null ? ` (${configured})` : '';
}
