/**
 * "Export again with these settings": a folder's exported photos written anew with its current
 * export settings, from results already paid for (free). Offered where the operator is once the
 * preset changed (the folder's card, Review), not only on the Export screen (review uirev30 1).
 */
import { useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { EXPORT_PRESET_LABELS, type ExportSettings, type FolderView } from '../../../shared/studio';
import { attemptsOf } from '../attempts';
import { folderName, photoCount } from '../names';
import { useQueue } from '../stores/queue-store';
import { act, useUi } from '../stores/ui-store';
import { ConfirmDialog } from './Dialog';

const sameSettings = (a: ExportSettings, b: ExportSettings) =>
  a.preset === b.preset &&
  a.format === b.format &&
  a.quality === b.quality &&
  a.naming === b.naming;

/**
 * A folder's photos already exported (their latest attempt): all of them, and those whose files
 * were written with other settings than the folder's now (an export again updates the snapshot).
 */
export function useExported(folder: FolderView | undefined): { all: string[]; stale: string[] } {
  // One flat list for a shallow compare: each id, "!"-marked when written with other settings.
  const marked = useQueue(
    useShallow((s) =>
      folder
        ? attemptsOf(Object.values(s.items).filter((i) => i.folderId === folder.id))
            .current.filter((i) => i.state === 'exported')
            .map((i) => (sameSettings(i.recipe.export, folder.recipe.export) ? i.id : `!${i.id}`))
        : [],
    ),
  );
  return useMemo(
    () => ({
      all: marked.map((m) => m.replace(/^!/, '')),
      stale: marked.filter((m) => m.startsWith('!')).map((m) => m.slice(1)),
    }),
    [marked],
  );
}

/** The button and its confirmation: `ids` are the folder's exported photos to write anew. */
export function ExportAgainButton({
  folder,
  ids,
  disabled = false,
  title,
}: {
  folder: FolderView;
  ids: string[];
  disabled?: boolean;
  title?: string;
}) {
  const [confirming, setConfirming] = useState(false);
  const { preset, naming } = folder.recipe.export;
  return (
    <>
      <button
        type="button"
        disabled={disabled || ids.length === 0}
        title={title}
        onClick={() => setConfirming(true)}
      >
        Export again with these settings ({ids.length}, free)…
      </button>
      {confirming ? (
        <ConfirmDialog
          title={`Export ${photoCount(ids.length)} again?`}
          confirmLabel="Export again (free)"
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            act(async () => {
              const changed = await useQueue.getState().exportAgain(ids);
              useUi
                .getState()
                .notify(
                  `${photoCount(changed)} exported again with ${EXPORT_PRESET_LABELS[preset]}; nothing sent to the service, nothing charged.`,
                );
            });
          }}
        >
          <p>
            The approved results of {photoCount(ids.length)} already exported from{' '}
            {folderName(folder.path)} are written again with its current settings (
            {EXPORT_PRESET_LABELS[preset]}, “{naming}”). They are already paid for: nothing is sent
            to the service and nothing is charged.
          </p>
          <p>The files written for them before are replaced.</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

/**
 * Said where the operator is once a folder's export settings changed after photos were exported
 * with the old ones: how many, and the Export screen's button (the same photos, the same count).
 * Nothing when none are.
 */
export function ExportSettingsChanged({ folder }: { folder: FolderView }) {
  const { all, stale } = useExported(folder);
  if (stale.length === 0) return null;
  const { preset, naming } = folder.recipe.export;
  return (
    <div className="wait" role="status" data-testid="export-settings-changed">
      {stale.length === all.length
        ? photoCount(all.length)
        : `${stale.length} of the ${all.length} photos`}{' '}
      exported from {folderName(folder.path)} {stale.length === 1 ? 'was' : 'were'} written with
      earlier export settings (now {EXPORT_PRESET_LABELS[preset]}, “{naming}”).{' '}
      <ExportAgainButton folder={folder} ids={all} />
    </div>
  );
}
