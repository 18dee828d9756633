import { useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import {
  EXPORT_PRESET_LABELS,
  EXPORT_PRESETS,
  type ExportSettings,
  type ResultView,
} from '../../../shared/studio';
import { Choice } from '../components/Choice';
import { ExportAgainButton, useExported } from '../components/ExportAgain';
import { EmptyState } from '../components/EmptyState';
import { NamingPreview } from '../components/NamingPreview';
import { useFolders } from '../stores/folders-store';
import { useQueue } from '../stores/queue-store';
import { useResults } from '../stores/results-store';
import { folderName } from '../names';
import { act, useUi } from '../stores/ui-store';
import { studio } from '../transport';

export function ExportScreen() {
  const folders = useFolders((s) => s.folders);
  const exported = useResults(
    useShallow((s) => Object.values(s.results).filter((r) => r.exportedPath !== null)),
  );
  const approvedWaiting = useResults(
    (s) =>
      Object.values(s.results).filter((r) => r.review === 'approved' && !r.exportedPath).length,
  );
  const [folderId, setFolderId] = useState<string>('');
  const folder = folders.find((f) => f.id === folderId) ?? folders[0];
  const [draft, setDraft] = useState<ExportSettings | null>(null);
  const [namingError, setNamingError] = useState<string | null>(null);
  const settings = draft ?? folder?.recipe.export ?? null;
  const sampleItems = useQueue(
    useShallow((s) =>
      Object.values(s.items)
        .filter((i) => i.folderId === folder?.id)
        .slice(0, 3)
        .map((i) => i.id),
    ),
  );

  // The folder's photos already exported (their latest attempt): what "Export again" writes anew.
  const exportedIds = useExported(folder).all;

  const exportNow = () =>
    act(async () => {
      const { exported: moved } = await studio().call('export.run', {});
      useUi
        .getState()
        .notify(
          moved
            ? `Exporting ${moved} photo${moved === 1 ? '' : 's'}`
            : 'Nothing waiting: approve results in Review first.',
        );
    });

  return (
    <section aria-label="Export">
      <div className="toolbar">
        <button type="button" className="primary" onClick={exportNow}>
          Export approved now{approvedWaiting ? ` (${approvedWaiting})` : ''}
        </button>
      </div>
      {folder && settings ? (
        <form
          className="panel"
          aria-label="Export settings"
          onSubmit={(e) => {
            e.preventDefault();
            act(async () => {
              await useFolders
                .getState()
                .setRecipe(folder.id, { ...folder.recipe, export: settings });
              setDraft(null);
              useUi
                .getState()
                .notify(
                  'Export settings saved: they apply to photos dropped from now on. “Export again with these settings” writes the photos already exported anew, free.',
                );
            });
          }}
        >
          <div className="row">
            <label>
              Folder
              <select
                value={folder.id}
                onChange={(e) => {
                  setFolderId(e.target.value);
                  setDraft(null);
                }}
              >
                {folders.map((f) => (
                  <option key={f.id} value={f.id}>
                    {folderName(f.path)}
                  </option>
                ))}
              </select>
            </label>
            <Choice
              label="Preset"
              value={settings.preset}
              options={EXPORT_PRESETS}
              labels={EXPORT_PRESET_LABELS}
              onChange={(v) =>
                v && setDraft({ ...settings, preset: v as ExportSettings['preset'] })
              }
            />
            <label>
              Naming pattern
              <input
                value={settings.naming}
                onChange={(e) => setDraft({ ...settings, naming: e.target.value })}
                aria-describedby="export-naming-preview"
              />
            </label>
            <button type="submit" disabled={!draft || namingError !== null}>
              Save
            </button>
            <ExportAgainButton
              folder={folder}
              ids={exportedIds}
              disabled={draft !== null}
              {...(draft !== null ? { title: 'Save the settings first' } : {})}
            />
          </div>
          <NamingPreview
            id="export-naming-preview"
            naming={settings.naming}
            format={settings.format}
            itemIds={sampleItems}
            folderPath={folder.path}
            onError={setNamingError}
          />
          {namingError && draft ? (
            <p className="problem">
              Not saved: fix the pattern first. Nothing is charged for photos until it is valid.
            </p>
          ) : null}
          <p className="muted">Tokens: {'{name} {folder} {tool} {shot} {n} {date} {ext}'}</p>
        </form>
      ) : null}
      {exported.length === 0 ? (
        <EmptyState title="Nothing exported yet">
          Approved results are written to each folder’s output folder, named by its pattern, with a
          compliance report.
        </EmptyState>
      ) : (
        <table className="items" aria-label="Exported files">
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Compliance</th>
            </tr>
          </thead>
          <tbody>
            {exported.map((r) => (
              <ExportedRow key={r.id} result={r} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function ExportedRow({ result }: { result: ResultView }) {
  const failing = useMemo(
    () => result.compliance?.checks.filter((c) => !c.ok) ?? [],
    [result.compliance],
  );
  return (
    <tr>
      <td>
        <code>{result.exportedPath}</code>
      </td>
      <td className={failing.length ? 'problem' : 'ok'}>
        {result.compliance === null
          ? '—'
          : failing.length === 0
            ? `passes ${result.compliance.checks.length} checks`
            : failing.map((c) => `${c.message} (${c.value}, expected ${c.expected})`).join('; ')}
      </td>
    </tr>
  );
}
