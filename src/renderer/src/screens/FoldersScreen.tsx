import { useEffect, useState, type DragEvent, type FormEvent } from 'react';
import type { FolderView, RecipeInput } from '../../../shared/studio';
import { EmptyState } from '../components/EmptyState';
import { DEFAULT_RECIPE, RecipeBuilder, recipeProblem } from '../components/RecipeBuilder';
import { useFolders } from '../stores/folders-store';
import { act, useUi } from '../stores/ui-store';

const describe = (recipe: RecipeInput): string => {
  const r = recipe.request as Record<string, unknown>;
  if (typeof r.readyTemplateSetId === 'string') return `ready shoot ${r.readyTemplateSetId}`;
  if (typeof r.templateSetId === 'string') return `look ${r.templateSetId}`;
  return String(r.toolId ?? 'tool').replaceAll('_', ' ');
};

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
          Add a folder, pick what to make of each photo, then drop product photos into it. Dropshoot picks them up, runs them and waits for your review.
        </EmptyState>
      ) : (
        <ul className="cards" aria-label="Watched folders">
          {folders.map((folder) => (
            <li key={folder.id} className="card">
              <div>
                <strong>{folder.path}</strong>
                <div className="muted">
                  {describe(folder.recipe)} → {folder.outputDir}
                </div>
                {folder.waitReason && <div className="wait">Waiting: {folder.waitReason.replaceAll('_', ' ')}</div>}
                <CeilingForm folder={folder} />
              </div>
              <div className="actions">
                <button type="button" onClick={() => act(() => useFolders.getState().setPaused(folder.id, !folder.paused))}>
                  {folder.paused ? 'Resume' : 'Pause'}
                </button>
                <button type="button" onClick={() => act(() => useFolders.getState().remove(folder.id))}>
                  Stop watching
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
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
      aria-label={`Diamond ceiling for ${folder.path}`}
      onSubmit={(event) => {
        event.preventDefault();
        if (parsed !== 'invalid') act(() => useFolders.getState().setCeiling(folder.id, parsed));
      }}
    >
      <label htmlFor={id}>Spend at most</label>
      <input id={id} inputMode="numeric" size={7} value={text} onChange={(e) => setText(e.target.value)} placeholder="no limit" aria-invalid={parsed === 'invalid'} />
      <span className="muted">diamonds · {folder.diamondsSpent} spent</span>
      <button type="submit" disabled={parsed === 'invalid' || parsed === folder.maxDiamonds}>
        Set
      </button>
      {parsed === 'invalid' && <span className="problem">Whole diamonds, 1 or more; blank for no limit.</span>}
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
  const [busy, setBusy] = useState(false);
  const problem = recipeProblem(recipe);

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    const file = event.dataTransfer.files[0];
    if (!file) return;
    // Only the desktop app can tell where a dropped folder lives; browsers hide local paths.
    const dropped = window.dropshoot?.pathForFile(file);
    if (dropped) setPath(dropped);
    else useUi.getState().fail('This browser does not reveal where a dropped folder lives: type its path instead.');
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    act(async () => {
      try {
        await useFolders.getState().add({ path, outputDir: outputDir || `${path.replace(/[\\/]+$/, '')}-export`, recipe, maxDiamonds: maxDiamonds === 'invalid' ? null : maxDiamonds });
        useUi.getState().clearDraft();
        useUi.getState().notify(`Watching ${path}. Drop photos into it.`);
        onDone();
      } finally {
        setBusy(false);
      }
    });
  };

  return (
    <form className="panel" aria-label="Add a hot folder" onSubmit={submit} onDragOver={(e) => e.preventDefault()} onDrop={onDrop}>
      <p className="muted">Drop a folder here, or type its path.</p>
      <div className="row">
        <label>
          Folder to watch
          <input required value={path} onChange={(e) => setPath(e.target.value)} placeholder="/Volumes/Studio/incoming" />
        </label>
        <label>
          Output folder
          <input value={outputDir} onChange={(e) => setOutputDir(e.target.value)} placeholder="next to it, “-export”" />
        </label>
        <label>
          Spend at most (diamonds)
          <input inputMode="numeric" value={ceiling} onChange={(e) => setCeiling(e.target.value)} placeholder="no limit" aria-invalid={maxDiamonds === 'invalid'} />
        </label>
      </div>
      <RecipeBuilder value={recipe} onChange={setRecipe} />
      <div className="toolbar">
        <button type="submit" className="primary" disabled={busy || !path || problem !== null || maxDiamonds === 'invalid'}>
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
      </div>
    </form>
  );
}
