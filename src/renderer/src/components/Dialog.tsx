/**
 * An in-app modal dialog (Electron has no `window.prompt`, and `confirm` blocks the window):
 * focus moves into it, Tab stays inside, Escape cancels, and focus returns to where it was.
 */
import { useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';

export function Dialog(props: {
  title: string;
  children: ReactNode;
  onCancel(): void;
  role?: 'dialog' | 'alertdialog';
}) {
  const ref = useRef<HTMLDivElement>(null);
  const titleId = useId();
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>(
      '[data-autofocus], input, select, textarea, button',
    );
    first?.focus();
    return () => opener?.focus?.();
  }, []);
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      props.onCancel();
      return;
    }
    if (event.key !== 'Tab' || !ref.current) return;
    const focusable = [
      ...ref.current.querySelectorAll<HTMLElement>(
        'input, select, textarea, button:not(:disabled), [tabindex="0"]',
      ),
    ];
    const first = focusable[0];
    const last = focusable.at(-1);
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last?.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first?.focus();
    }
  };
  return (
    <div className="overlay" onKeyDown={onKeyDown}>
      <div
        className="dialog panel"
        role={props.role ?? 'dialog'}
        aria-modal="true"
        aria-labelledby={titleId}
        ref={ref}
      >
        <h2 id={titleId}>{props.title}</h2>
        {props.children}
      </div>
    </div>
  );
}

/** Asks before something that cannot be taken back or that costs diamonds. */
export function ConfirmDialog(props: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  /** The dismiss button's words, when "Cancel" would read as the action itself. */
  cancelLabel?: string;
  onConfirm(): void;
  onCancel(): void;
}) {
  return (
    <Dialog title={props.title} onCancel={props.onCancel} role="alertdialog">
      <div>{props.children}</div>
      <div className="toolbar">
        <button type="button" className="primary" data-autofocus onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onCancel}>
          {props.cancelLabel ?? 'Cancel'}
        </button>
      </div>
    </Dialog>
  );
}

/** Asks for one line of text (a look's name, say). */
export function PromptDialog(props: {
  title: string;
  label: string;
  initial: string;
  submitLabel: string;
  onSubmit(value: string): void;
  onCancel(): void;
}) {
  const [value, setValue] = useState(props.initial);
  return (
    <Dialog title={props.title} onCancel={props.onCancel}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim()) props.onSubmit(value.trim());
        }}
      >
        <label>
          {props.label}
          <input
            value={value}
            onChange={(e) => setValue(e.target.value)}
            required
            maxLength={120}
          />
        </label>
        <div className="toolbar">
          <button type="submit" className="primary" disabled={!value.trim()}>
            {props.submitLabel}
          </button>
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
