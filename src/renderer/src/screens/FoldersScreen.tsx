import { useEffect, useMemo, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { useShallow } from 'zustand/react/shallow';
import {
  HELD_UNSENT,
  type FolderView,
  type ItemState,
  type RecipeInput,
} from '../../../shared/studio';
import { ConfirmDialog } from '../components/Dialog';
import { EmptyState } from '../components/EmptyState';
import { ExportSettingsChanged } from '../components/ExportAgain';
import { Progress } from '../components/Progress';
import { attemptsOf } from '../attempts';
import { DEFAULT_RECIPE, RecipeBuilder } from '../components/RecipeBuilder';
import { folderName, recipeName } from '../names';
import { defaultRecipeFor } from '../recipe/request';
import { boardState, etaText, heldByDailyCap, heldText, progressOf, topUpWhere } from '../progress';
import { useCatalog } from '../stores/catalog-store';
import { useFolders } from '../stores/folders-store';
import { useQueue } from '../stores/queue-store';
import { act, useUi } from '../stores/ui-store';
import { errorText } from '../transport';

export function FoldersScreen() {
  const folders = useFolders((s) => s.folders);
  const loaded = useFolders((s) => s.loaded);
  const draft = useUi((s) => s.draftRecipe);
  const [adding, setAdding] = useState(false);
  useEffect(() => {
    if (draft) setAdding(true);
  }, [draft]);

  return (
    <section aria-label="Hot folders">
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => setAdding(true)} disabled={adding}>
          Add folder
        </button>
      </div>
      {adding && <AddFolderForm onDone={() => setAdding(false)} />}
      {loaded && folders.length === 0 && !adding ? (
        <EmptyState title="No hot folders yet">
          Add a folder, pick what to make of each photo, then drop product photos into it. Dropshoot
          picks them up, runs them and waits for your review.
        </EmptyState>
      ) : (
        <ul className="cards" aria-label="Watched folders">
          {folders.map((folder) => (
            <FolderCard key={folder.id} folder={folder} />
          ))}
        </ul>
      )}
    </section>
  );
}

/** One watched folder: its name, recipe and output, live counts, spend and time left. */
function FolderCard({ folder }: { folder: FolderView }) {
  const catalog = useCatalog((s) => s.catalog);
  const looks = useCatalog((s) => s.looks);
  const topUp = topUpWhere(useCatalog((s) => s.account));
  const attempts = useQueue(
    useShallow((s) => Object.values(s.items).filter((i) => i.folderId === folder.id)),
  );
  // A redo's earlier item is the photo's history, not another photo (uirev C4).
  const items = useMemo(() => attemptsOf(attempts).current, [attempts]);
  const queuePaused = useQueue((s) => s.paused);
  const [editing, setEditing] = useState(false);
  const [confirmStop, setConfirmStop] = useState(false);
  const name = folderName(folder.path);
  const current = JSON.stringify(folder.recipe);
  const count = (states: readonly ItemState[]) =>
    items.filter((i) => states.includes(boardState(i))).length;
  const queued = items.filter((i) => i.state === 'queued');
  // What "Stop watching" cancels (queue-actions.ts cancelUnsentOfFolder): photos held unsent (a
  // 402 leaves them at "submitting") too; left, they were paid for after a top-up (review rev34 M2).
  const unsent = items.filter(
    (i) =>
      i.state === 'queued' ||
      i.state === 'uploading' ||
      (i.state === 'submitting' &&
        i.waitReason !== null &&
        HELD_UNSENT.includes(i.waitReason) &&
        !i.jobId &&
        !i.uncertain &&
        i.maybeCharged !== true),
  );
  const olderRecipe = queued.filter((i) => JSON.stringify(i.recipe) !== current).length;
  const progress = progressOf(items);
  // Held photos (diamonds, the plan, a ceiling…) are not working: counted apart, their hold line says why.
  const heldCount = Object.values(progress.held).reduce((sum, n) => sum + n, 0);
  return (
    <li className="card folder-card" aria-label={`Folder ${name}`}>
      <div>
        <strong>{name}</strong> <span className="muted small">{folder.path}</span>
        <div>
          {recipeName(folder.recipe, catalog, looks)}{' '}
          <span className="muted">→ {folder.outputDir}</span>
        </div>
        {attempts.length === 0 ? (
          // "0/0 finished … ETA done" said done of a folder nothing was dropped into (uirev30);
          // a missing folder has nothing to drop into: its own line says so, alone.
          folder.missing ? null : (
            <div className="muted" data-testid="folder-empty">
              No photos yet: drop product photos into {folder.path}. Each is taken once its copy is
              complete.
            </div>
          )
        ) : (
          <div className="folder-stats">
            <Progress
              value={progress.done}
              max={progress.total}
              label={`${name}: ${progress.done} of ${progress.total} photos finished`}
            />
            <span data-testid="folder-counts">
              {progress.done}/{progress.total} finished · {progress.moving} working ·{' '}
              {heldCount ? `${heldCount} held · ` : ''}
              {count(['review'])} to review · {count(['exported'])} exported · {count(['rejected'])}{' '}
              rejected · {count(['failed'])} failed · ETA{' '}
              {etaText(progress, folder.paused || queuePaused, heldByDailyCap(items), topUp)}
            </span>
          </div>
        )}
        {folder.missing && (
          <div className="wait" role="status" data-testid="folder-missing">
            Folder not found: {folder.path} was moved or deleted, or its network share is not
            connected. Put it back there (or reconnect the share) and it is watched again, or press
            “Stop watching”.
            {attempts.length > 0
              ? ' Its photos cannot be sent meanwhile; they are taken again when it is back.'
              : ''}
          </div>
        )}
        {folder.paused && <div className="wait">Paused: new photos wait until you resume.</div>}
        {!folder.paused && heldText(progress.held, topUp) && (
          <div className="wait" data-testid="folder-held">
            {heldText(progress.held, topUp)}
          </div>
        )}
        {folder.waitReason && folder.waitReason !== 'paused' && !heldText(progress.held) && (
          <div className="wait">Waiting: {folder.waitReason.replaceAll('_', ' ')}</div>
        )}
        {olderRecipe > 0 && (
          <div className="muted">
            {olderRecipe} queued photo{olderRecipe === 1 ? '' : 's'} keep
            {olderRecipe === 1 ? 's' : ''} the recipe {olderRecipe === 1 ? 'it was' : 'they were'}{' '}
            queued with.
          </div>
        )}
        <ExportSettingsChanged folder={folder} />
        <CeilingForm folder={folder} />
        {editing && (
          <EditRecipe folder={folder} queued={queued.length} onDone={() => setEditing(false)} />
        )}
      </div>
      <div className="actions">
        <button
          type="button"
          onClick={() => act(() => useFolders.getState().setPaused(folder.id, !folder.paused))}
        >
          {folder.paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" onClick={() => setEditing(true)} disabled={editing}>
          Edit recipe
        </button>
        <button type="button" onClick={() => setConfirmStop(true)}>
          Stop watching
        </button>
      </div>
      {confirmStop && (
        <ConfirmDialog
          title={`Stop watching ${name}?`}
          confirmLabel="Stop watching"
          onCancel={() => setConfirmStop(false)}
          onConfirm={() => {
            setConfirmStop(false);
            act(async () => {
              await useFolders.getState().remove(folder.id);
              useUi.getState().notify(`Stopped watching ${name}. Its files stay where they are.`);
            });
          }}
        >
          <p>
            New photos dropped into {folder.path} will not be picked up.{' '}
            {unsent.length
              ? `${unsent.length} photo${unsent.length === 1 ? '' : 's'} still queued will be cancelled (nothing is charged for them). `
              : ''}
            Results already made stay in Review and Export.
          </p>
        </ConfirmDialog>
      )}
    </li>
  );
}

/** A folder's recipe, edited in place: new photos use the new one; queued ones keep theirs. */
function EditRecipe({
  folder,
  queued,
  onDone,
}: {
  folder: FolderView;
  queued: number;
  onDone(): void;
}) {
  const [recipe, setRecipe] = useState<RecipeInput>(folder.recipe);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLFormElement>(null);
  useEffect(() => ref.current?.querySelector<HTMLElement>('select, input')?.focus(), []);
  const keep = queued
    ? `The ${queued} photo${queued === 1 ? '' : 's'} already queued keep the recipe they were queued with.`
    : '';
  return (
    <form
      ref={ref}
      className="panel"
      aria-label={`Recipe of ${folderName(folder.path)}`}
      onSubmit={(event) => {
        event.preventDefault();
        setBusy(true);
        act(async () => {
          try {
            await useFolders.getState().setRecipe(folder.id, recipe);
            useUi
              .getState()
              .notify(
                `Recipe saved: new photos in ${folderName(folder.path)} use it. ${keep}`.trim(),
              );
            onDone();
          } finally {
            setBusy(false);
          }
        });
      }}
    >
      <RecipeBuilder
        value={recipe}
        onChange={setRecipe}
        folderPath={folder.path}
        onProblem={setProblem}
        footer={
          <div className="toolbar">
            <button type="submit" className="primary" disabled={busy || problem !== null}>
              Save recipe
            </button>
            <button type="button" onClick={onDone}>
              Cancel
            </button>
            <span className="muted">New photos use the saved recipe. {keep}</span>
          </div>
        }
      />
    </form>
  );
}

/** A blank field means no ceiling; whole diamonds otherwise. */
const parseCeiling = (text: string): number | null | 'invalid' => {
  if (text.trim() === '') return null;
  const value = Number(text);
  return Number.isInteger(value) && value >= 1 ? value : 'invalid';
};

/** The folder batch's diamond ceiling: photos wait (and say so) rather than cross it. */
function CeilingForm({ folder }: { folder: FolderView }) {
  const [text, setText] = useState(folder.maxDiamonds === null ? '' : String(folder.maxDiamonds));
  const parsed = parseCeiling(text);
  const id = `ceiling-${folder.id}`;
  return (
    <form
      className="row inline"
      aria-label={`Diamond ceiling for ${folderName(folder.path)}`}
      onSubmit={(event) => {
        event.preventDefault();
        if (parsed !== 'invalid') act(() => useFolders.getState().setCeiling(folder.id, parsed));
      }}
    >
      <label htmlFor={id}>Spend at most</label>
      <input
        id={id}
        inputMode="numeric"
        size={7}
        value={text}
        onChange={(e) => setText(e.target.value)}
        placeholder="no limit"
        aria-invalid={parsed === 'invalid'}
      />
      {/* The folder's one spend figure: its batch's, which the ceiling holds to (uirev C3). */}
      <span className="muted" data-testid="folder-spent">
        diamonds · {folder.diamondsSpent} spent
        {folder.diamondsUncertain > 0
          ? ` (and up to ${folder.diamondsUncertain} more on uncertain submissions)`
          : ''}
      </span>
      <button type="submit" disabled={parsed === 'invalid' || parsed === folder.maxDiamonds}>
        Set
      </button>
      {parsed === 'invalid' && (
        <span className="problem">Whole diamonds, 1 or more; blank for no limit.</span>
      )}
    </form>
  );
}

function AddFolderForm({ onDone }: { onDone(): void }) {
  const draft = useUi((s) => s.draftRecipe);
  const [path, setPath] = useState('');
  const [outputDir, setOutputDir] = useState('');
  const [ceiling, setCeiling] = useState('');
  const maxDiamonds = parseCeiling(ceiling);
  const [recipe, setRecipe] = useState<RecipeInput>(draft ?? DEFAULT_RECIPE);
  // The first paint's default names the embedded catalog's model: once the service's catalog is
  // here, an untouched default takes the model from it instead.
  const catalog = useCatalog((s) => s.catalog);
  useEffect(() => {
    if (catalog) setRecipe((r) => (r === DEFAULT_RECIPE ? defaultRecipeFor(catalog) : r));
  }, [catalog]);
  const [problem, setProblem] = useState<string | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  // The form opens where the operator's attention goes next: into it.
  useEffect(() => first.current?.focus(), []);

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    const file = event.dataTransfer.files[0];
    if (!file) return;
    // Only the desktop app can tell where a dropped folder lives; browsers hide local paths.
    const dropped = window.dropshoot?.pathForFile(file);
    if (dropped) setPath(dropped);
    else
      useUi
        .getState()
        .fail('This browser does not reveal where a dropped folder lives: type its path instead.');
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setRefused(null);
    act(async () => {
      try {
        await useFolders.getState().add({
          path,
          outputDir: outputDir || `${path.replace(/[\\/]+$/, '')}-export`,
          recipe,
          maxDiamonds: maxDiamonds === 'invalid' ? null : maxDiamonds,
        });
        useUi.getState().clearDraft();
        useUi.getState().notify(`Watching ${path}. Drop photos into it.`);
        onDone();
      } catch (error) {
        // Said next to the button too: the banner may be scrolled far above a long form.
        setRefused(errorText(error));
        throw error;
      } finally {
        setBusy(false);
      }
    });
  };

  return (
    <form
      className="panel"
      aria-label="Add a hot folder"
      onSubmit={submit}
      onDragOver={(e) => e.preventDefault()}
      onDrop={onDrop}
    >
      <p className="muted">Drop a folder here, or type its path.</p>
      <div className="row">
        <label>
          Folder to watch
          <input
            ref={first}
            required
            value={path}
            onChange={(e) => setPath(e.target.value)}
            placeholder="/Volumes/Studio/incoming"
          />
        </label>
        <label>
          Output folder
          <input
            value={outputDir}
            onChange={(e) => setOutputDir(e.target.value)}
            placeholder="next to it, “-export”"
          />
        </label>
        <label>
          Spend at most (diamonds)
          <input
            inputMode="numeric"
            value={ceiling}
            onChange={(e) => setCeiling(e.target.value)}
            placeholder="no limit"
            aria-invalid={maxDiamonds === 'invalid'}
          />
        </label>
      </div>
      <RecipeBuilder
        value={recipe}
        onChange={setRecipe}
        {...(path ? { folderPath: path } : {})}
        onProblem={setProblem}
        footer={
          <div className="toolbar">
            <button
              type="submit"
              className="primary"
              disabled={busy || !path || problem !== null || maxDiamonds === 'invalid'}
            >
              {busy ? 'Checking…' : 'Start watching'}
            </button>
            <button
              type="button"
              onClick={() => {
                useUi.getState().clearDraft();
                onDone();
              }}
            >
              Cancel
            </button>
            {!path && <span className="muted">Type the folder to watch first.</span>}
            {refused && <span className="problem">{refused}</span>}
          </div>
        }
      />
    </form>
  );
}
