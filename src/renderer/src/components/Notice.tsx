import { useUi } from '../stores/ui-store';

/** The last error (with what to do next) or notice, until dismissed; a notice may carry an action. */
export function Notice() {
  const error = useUi((s) => s.error);
  const notice = useUi((s) => s.notice);
  const action = useUi((s) => s.noticeAction);
  const dismiss = useUi((s) => s.dismiss);
  if (!error && !notice) return null;
  return (
    <div className={error ? 'banner banner-error' : 'banner'} role={error ? 'alert' : 'status'}>
      <span>{error ?? notice}</span>
      <span className="actions">
        {!error && action ? (
          <button
            type="button"
            className="primary"
            onClick={() => {
              dismiss();
              action.run();
            }}
          >
            {action.label}
          </button>
        ) : null}
        <button type="button" onClick={dismiss}>
          Dismiss
        </button>
      </span>
    </div>
  );
}
