import { useEffect, useState } from 'react';
import type { ExportSettings } from '../../../shared/studio';
import { errorText, studio } from '../transport';

/** The file names a naming pattern gives, asked of the engine as you type (debounced). */
export function NamingPreview({ id, naming, format, itemIds }: { id: string; naming: string; format: ExportSettings['format']; itemIds?: string[] }) {
  const [preview, setPreview] = useState<{ names: string[] } | { error: string } | null>(null);
  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      studio()
        .call('export.preview', { naming: naming || ' ', format, ...(itemIds?.length ? { itemIds } : {}) })
        .then((p) => live && setPreview(p))
        .catch((e: unknown) => live && setPreview({ error: errorText(e) }));
    }, 150);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [naming, format, itemIds]);
  return (
    <div id={id} className="naming-preview" aria-live="polite">
      {preview === null ? null : 'error' in preview ? (
        <p className="problem">{preview.error}</p>
      ) : (
        <p>
          Files: {preview.names.map((n) => <code key={n}>{n}</code>)}
        </p>
      )}
    </div>
  );
}
