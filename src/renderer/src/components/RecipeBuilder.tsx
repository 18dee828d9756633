/**
 * Builds a recipe: a tool with its images and fields, a ready shoot, or a look, plus
 * export settings. Validated as you type against the same rules the service applies, with the
 * price per photo. The rules live in ../recipe/; each kind's fields in ./recipe/.
 */
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import {
  PHOTO_PLACEHOLDER,
  recipeKind,
  type ExportSettings,
  type RecipeInput,
  type RecipeKind,
} from '../../../shared/studio';
import { getTool, isToolId, TOOLS } from '../../../shared/tools';
import { defaultFashionModelId, defaultReadyShootId } from '../recipe/catalog-defaults';
import { diamondCount, toolName } from '../names';
import { recipeProblem } from '../recipe/problem';
import {
  DEFAULT_EXPORT,
  DEFAULT_RECIPE,
  namingTool,
  READY_SHOOT_NAMING,
  recipePrice,
  requestForTool,
  type EditableRequest,
} from '../recipe/request';
import { useCatalog } from '../stores/catalog-store';
import { act } from '../stores/ui-store';
import { ExportFields } from './recipe/ExportFields';
import { LookField } from './recipe/LookField';
import { ReadyShootFields } from './recipe/ReadyShootFields';
import { ToolFields } from './recipe/ToolFields';

export { DEFAULT_RECIPE, READY_SHOOT_NAMING, recipeProblem };

type Props = {
  value: RecipeInput;
  onChange(recipe: RecipeInput): void;
  /** The folder the recipe is for: its own photos name the preview. */
  folderPath?: string;
  /** Buttons kept in view with the validation status, at the bottom of a long form. */
  footer?: ReactNode;
  /** The problem shown in the status (request or naming pattern), for the form's submit button. */
  onProblem?(problem: string | null): void;
};

export function RecipeBuilder({ value, onChange, folderPath, footer, onProblem }: Props) {
  const catalog = useCatalog((s) => s.catalog);
  const looks = useCatalog((s) => s.looks);
  useEffect(() => {
    act(() =>
      Promise.all([useCatalog.getState().loadCatalog(), useCatalog.getState().loadLooks()]),
    );
  }, []);

  const request = value.request as EditableRequest;
  const kind = recipeKind(request);
  const exportSettings = { ...DEFAULT_EXPORT, ...value.export } as ExportSettings;
  const setRequest = (next: EditableRequest) =>
    onChange({ ...value, request: next as RecipeInput['request'] });
  const setField = (field: string, v: unknown) => {
    const next = { ...request };
    if (v === undefined || v === '') delete next[field];
    else next[field] = v;
    setRequest(next);
  };
  const setImage = (key: string, v: string | null) => {
    const images = { ...(request.images ?? {}) };
    if (v) images[key] = v;
    else delete images[key];
    setRequest({ ...request, images });
  };
  const setExport = (patch: Partial<ExportSettings>) =>
    onChange({ ...value, export: { ...exportSettings, ...patch } });

  const [namingError, setNamingError] = useState<string | null>(null);
  const requestProblem = useMemo(() => recipeProblem(value, catalog), [value, catalog]);
  const problem = requestProblem ?? (namingError ? `the file-name pattern: ${namingError}` : null);
  useEffect(() => onProblem?.(problem), [problem, onProblem]);
  const toolId =
    typeof request.toolId === 'string' && isToolId(request.toolId) ? request.toolId : null;
  const tool = toolId ? getTool(toolId) : null;
  const readyShoot =
    kind === 'ready_shoot'
      ? catalog?.readyShoots.find((r) => r.id === request.readyTemplateSetId)
      : undefined;
  const price = recipePrice(request, catalog, looks, tool);

  const changeKind = (next: RecipeKind) => {
    if (next === 'tool')
      setRequest(requestForTool('virtual_model', {}, defaultFashionModelId(catalog)));
    if (next === 'ready_shoot') {
      // Several shots per photo: the default names say which shot each file is.
      const naming =
        exportSettings.naming === DEFAULT_EXPORT.naming
          ? READY_SHOOT_NAMING
          : exportSettings.naming;
      const ready = {
        readyTemplateSetId: defaultReadyShootId(catalog),
        images: { garment_photo: PHOTO_PLACEHOLDER },
      };
      onChange({
        ...value,
        request: ready as RecipeInput['request'],
        export: { ...exportSettings, naming },
      });
    }
    if (next === 'look')
      setRequest({
        templateSetId: looks[0]?.id ?? '',
        images: { garment_photo: PHOTO_PLACEHOLDER },
      });
  };
  const changeTool = (next: string) => {
    if (!isToolId(next)) return;
    // A cut-out keeps its transparency only in PNG or WebP: never flatten it into a JPEG by default.
    const format =
      next === 'remove_background' && exportSettings.format === 'jpeg'
        ? 'png'
        : exportSettings.format;
    const nextRequest = requestForTool(next, request, defaultFashionModelId(catalog));
    onChange({
      ...value,
      request: nextRequest as RecipeInput['request'],
      export: { ...exportSettings, format },
    });
  };

  return (
    <div className="recipe">
      <div className="row">
        <label>
          Recipe kind
          <select value={kind} onChange={(e) => changeKind(e.target.value as RecipeKind)}>
            <option value="tool">A tool</option>
            <option value="ready_shoot">A ready shoot</option>
            <option value="look">A look</option>
          </select>
        </label>
        {kind === 'tool' && (
          <label>
            Tool
            <select value={toolId ?? ''} onChange={(e) => changeTool(e.target.value)}>
              {[...TOOLS.values()].map((t) => (
                <option key={t.id} value={t.id}>
                  {toolName(t.id)} · {diamondCount(t.price)}
                </option>
              ))}
            </select>
          </label>
        )}
        <p className="price" aria-live="polite">
          {price === null ? 'Price: pick a tool' : `Price: ${diamondCount(price)} per photo`}
        </p>
      </div>

      {kind === 'tool' && tool && (
        <ToolFields tool={tool} request={request} setField={setField} setImage={setImage} />
      )}
      {kind === 'ready_shoot' && (
        <ReadyShootFields request={request} setRequest={setRequest} setField={setField} />
      )}
      {kind === 'look' && <LookField request={request} setRequest={setRequest} />}

      <ExportFields
        settings={exportSettings}
        onChange={setExport}
        {...(folderPath ? { folderPath } : {})}
        tool={namingTool(request, looks, toolId)}
        {...(readyShoot
          ? {
              shots: Array.isArray(request.shotIds)
                ? (request.shotIds as string[])
                : readyShoot.shots.map((s) => s.id),
            }
          : {})}
        readyShoot={kind === 'ready_shoot'}
        onNamingError={setNamingError}
      />

      <div className="form-footer">
        <p className={problem ? 'problem' : 'ok'} role="status" aria-live="polite">
          {problem ? `Not ready: ${problem}` : 'Recipe is valid.'}
        </p>
        {footer}
      </div>
    </div>
  );
}
