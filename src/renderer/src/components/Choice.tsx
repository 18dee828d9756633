/** A labelled select over a fixed list (its labels, else ids shown with spaces), optionally with "Default". */
export function Choice(props: {
  label: string;
  value: unknown;
  options: readonly string[];
  /** What each option is called (its id, underscores as spaces, when none is given). */
  labels?: Readonly<Record<string, string>>;
  optional?: boolean;
  onChange(value: string | undefined): void;
}) {
  return (
    <label>
      {props.label}
      <select
        value={typeof props.value === 'string' ? props.value : ''}
        onChange={(e) => props.onChange(e.target.value || undefined)}
      >
        {props.optional && <option value="">Default</option>}
        {props.options.map((o) => (
          <option key={o} value={o}>
            {props.labels?.[o] ?? o.replaceAll('_', ' ')}
          </option>
        ))}
      </select>
    </label>
  );
}
