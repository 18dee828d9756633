import { useUi } from '../stores/ui-store';

/** The last error (with what to do next) or notice, until dismissed. */
export function Notice() {
  const error = useUi((s) => s.error);
  const notice = useUi((s) => s.notice);
  const dismiss = useUi((s) => s.dismiss);
  if (!error && !notice) return null;
  return (
    <div className={error ? 'banner banner-error' : 'banner'} role={error ? 'alert' : 'status'}>
      <span>{error ?? notice}</span>
      <button type="button" onClick={dismiss}>
        Dismiss
      </button>
    </div>
  );
}
