import { useEffect, useState } from 'react';
import type { ExportSettings } from '../../../shared/studio';
import { errorText, studio } from '../transport';

/**
 * The file names a naming pattern gives, asked of the engine as you type (debounced): for this
 * folder's own photos (or its items), with the recipe's real shots; example names only when the
 * folder has none yet, and labelled so.
 */
export function NamingPreview(props: {
  id: string;
  naming: string;
  format: ExportSettings['format'];
  itemIds?: string[];
  folderPath?: string;
  tool?: string;
  shots?: string[];
  onError?(error: string | null): void;
}) {
  const { id, naming, format, itemIds, folderPath, tool, shots, onError } = props;
  const [preview, setPreview] = useState<{ names: string[] } | { error: string } | null>(null);
  const shotKey = shots?.join(',');
  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      studio()
        .call('export.preview', {
          naming: naming || ' ',
          format,
          ...(itemIds?.length ? { itemIds } : {}),
          ...(folderPath ? { folderPath } : {}),
          ...(tool ? { tool } : {}),
          ...(shotKey ? { shots: shotKey.split(',') } : {}),
        })
        .then((p) => {
          if (!live) return;
          setPreview(p);
          onError?.('error' in p ? p.error : null);
        })
        .catch((e: unknown) => live && setPreview({ error: errorText(e) }));
    }, 150);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [naming, format, itemIds, folderPath, tool, shotKey, onError]);
  return (
    <div id={id} className="naming-preview" aria-live="polite">
      {preview === null ? null : 'error' in preview ? (
        <p className="problem">{preview.error}</p>
      ) : (
        <p>
          Files:{' '}
          {preview.names.map((n) => (
            <code key={n}>{n}</code>
          ))}
        </p>
      )}
    </div>
  );
}
