/**
 * Builds a recipe: a tool with its images and fields, a ready shoot, or a saved look, plus
 * export settings. Validated as you type against the same rules the service applies, with the
 * price per photo.
 */
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { JEWELRY_TYPES, RATIOS, SHOT_TYPES, STYLE_PRESETS, VIRTUAL_MODEL_RATIOS, type GenerationRequest, type ToolId } from '../../../shared/api';
import { validateGeneration } from '../../../shared/generation-rules';
import { EXPORT_FORMATS, EXPORT_PRESETS, PHOTO_PLACEHOLDER, RecipeSchema, type ExportSettings, type RecipeInput } from '../../../shared/studio';
import { CATALOG_SHOT_PRICE, getTool, isToolId, TOOLS } from '../../../shared/tools';
import { useCatalog } from '../stores/catalog-store';
import { act } from '../stores/ui-store';
import { CatalogPicker } from './CatalogPicker';
import { NamingPreview } from './NamingPreview';

type Kind = 'tool' | 'ready' | 'look';
type Request = Record<string, unknown> & { images?: Record<string, string | string[]> };

export const DEFAULT_RECIPE: RecipeInput = {
  request: { toolId: 'virtual_model', images: { garment_photo: PHOTO_PLACEHOLDER, fashion_model: 'fm_amara' }, ratio: '4:5' },
  export: { preset: 'original', format: 'jpeg', quality: 90, naming: '{name}-{tool}-{n}' },
};

const kindOf = (request: Request): Kind => ('readyTemplateSetId' in request ? 'ready' : 'templateSetId' in request ? 'look' : 'tool');

/** The image field a dropped photo goes into for a tool. */
function photoField(toolId: ToolId): { key: string; array: boolean } {
  const tool = getTool(toolId);
  const requirement = tool.required.find((r) => r.field !== 'fashion_model') ?? tool.required[0]!;
  const key = requirement.oneOf[0]!;
  return { key, array: tool.arrayKeys.includes(key) };
}

function requestForTool(toolId: ToolId, previous: Request): Request {
  const tool = getTool(toolId);
  const photo = photoField(toolId);
  const images: Record<string, string | string[]> = { [photo.key]: photo.array ? [PHOTO_PLACEHOLDER] : PHOTO_PLACEHOLDER };
  const kept = previous.images ?? {};
  for (const key of ['fashion_model', 'venue']) {
    const value = kept[key];
    if (tool.imageKeys.includes(key) && typeof value === 'string') images[key] = value;
  }
  if (tool.required.some((r) => r.field === 'fashion_model') && !images.fashion_model) images.fashion_model = 'fm_amara';
  const request: Request = { toolId, images };
  for (const field of tool.fields) if (field !== 'images' && previous[field] !== undefined) (request as Record<string, unknown>)[field] = previous[field];
  if (tool.requiredFields.includes('shotType')) request.shotType ??= 'full_body';
  if (tool.requiredFields.includes('stylePreset')) request.stylePreset ??= 'catalog';
  if (tool.requiredFields.includes('jewelryType')) request.jewelryType ??= 'ring';
  if (tool.requiredFields.includes('motionPrompt')) request.motionPrompt ??= 'slow zoom in';
  if (toolId === 'photo_reframe') request.targetRatio ??= '4:5';
  return request;
}

/** The names the form shows, for messages about request fields. */
const FIELD_LABELS: Record<string, string> = {
  customPrompt: 'Instructions',
  motionPrompt: 'Camera motion',
  targetRatio: 'Target ratio',
  backgroundColor: 'Background',
  shotType: 'Shot type',
  stylePreset: 'Style',
  jewelryType: 'Jewelry type',
  fashion_model: 'Fashion model',
};

/** A required text field, e.g. photo_edit's instructions: the recipe says so up front. */
const isRequiredField = (toolId: ToolId | null, field: string) => (toolId ? getTool(toolId).requiredFields.includes(field as never) : false);

/** Why a recipe cannot run, in words (with the form's own field names), or null. */
export function recipeProblem(recipe: RecipeInput): string | null {
  const parsed = RecipeSchema.safeParse(recipe);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return `${issue.path.join('.') || 'recipe'}: ${issue.message}`;
  }
  const request = parsed.data.request as Request;
  if (kindOf(request) !== 'tool') return null;
  try {
    validateGeneration(request as GenerationRequest);
    return null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const missing = /missing required field '(\w+)'/.exec(message);
    if (missing) return `“${FIELD_LABELS[missing[1]!] ?? missing[1]}” is required for this tool: fill it in.`;
    return message.replace(/'(\w+)'/g, (whole, field: string) => (FIELD_LABELS[field] ? `“${FIELD_LABELS[field]}”` : whole));
  }
}

/** The naming pattern a ready shoot starts with: one file per shot, named by the shot. */
export const READY_SHOOT_NAMING = '{name}-{shot}-{n}';

export function RecipeBuilder({
  value,
  onChange,
  folderPath,
  footer,
  onProblem,
}: {
  value: RecipeInput;
  onChange(recipe: RecipeInput): void;
  /** The folder the recipe is for: its own photos name the preview. */
  folderPath?: string;
  /** Buttons kept in view with the validation status, at the bottom of a long form. */
  footer?: ReactNode;
  /** The problem shown in the status (request or naming pattern), for the form's submit button. */
  onProblem?(problem: string | null): void;
}) {
  const catalog = useCatalog((s) => s.catalog);
  const looks = useCatalog((s) => s.looks);
  const [gender, setGender] = useState<'all' | 'female' | 'male'>('all');
  useEffect(() => {
    act(() => Promise.all([useCatalog.getState().loadCatalog(), useCatalog.getState().loadLooks()]));
  }, []);

  const request = value.request as Request;
  const kind = kindOf(request);
  const exportSettings = { ...DEFAULT_RECIPE.export, ...value.export } as ExportSettings;
  const setRequest = (next: Request) => onChange({ ...value, request: next as RecipeInput['request'] });
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
  const setExport = (patch: Partial<ExportSettings>) => onChange({ ...value, export: { ...exportSettings, ...patch } });

  const [namingError, setNamingError] = useState<string | null>(null);
  const requestProblem = useMemo(() => recipeProblem(value), [value]);
  const problem = requestProblem ?? (namingError ? `the file-name pattern: ${namingError}` : null);
  useEffect(() => onProblem?.(problem), [problem, onProblem]);
  const toolId = typeof request.toolId === 'string' && isToolId(request.toolId) ? request.toolId : null;
  const tool = toolId ? getTool(toolId) : null;
  const readySet = kind === 'ready' ? catalog?.readySets.find((r) => r.id === request.readyTemplateSetId) : undefined;
  const price =
    kind === 'ready'
      ? CATALOG_SHOT_PRICE * (Array.isArray(request.shotIds) ? request.shotIds.length : (readySet?.shotCount ?? 0))
      : kind === 'look'
        ? (() => {
            const look = looks.find((l) => l.id === request.templateSetId);
            return look ? getTool(look.toolId).price : null;
          })()
        : (tool?.price ?? null);

  const models = (catalog?.fashionModels ?? []).filter((m) => gender === 'all' || m.gender === gender);
  const poseType = request.jewelryType && toolId === 'jewelry_on_model' ? String(request.jewelryType) : 'default';
  const poses = (catalog?.poses ?? []).filter((p) => p.type === poseType);

  return (
    <div className="recipe">
      <div className="row">
        <label>
          Recipe kind
          <select
            value={kind}
            onChange={(e) => {
              const next = e.target.value as Kind;
              if (next === 'tool') setRequest(requestForTool('virtual_model', {}));
              if (next === 'ready') {
                // Several shots per photo: the default names say which shot each file is.
                const naming = exportSettings.naming === DEFAULT_RECIPE.export?.naming ? READY_SHOOT_NAMING : exportSettings.naming;
                onChange({ ...value, request: { readyTemplateSetId: catalog?.readySets[0]?.id ?? 'rts_studio_basics', images: { garment_photo: PHOTO_PLACEHOLDER } } as RecipeInput['request'], export: { ...exportSettings, naming } });
              }
              if (next === 'look') setRequest({ templateSetId: looks[0]?.id ?? '', images: { garment_photo: PHOTO_PLACEHOLDER } });
            }}
          >
            <option value="tool">A tool</option>
            <option value="ready">A ready shoot</option>
            <option value="look">A saved look</option>
          </select>
        </label>
        {kind === 'tool' && (
          <label>
            Tool
            <select
              value={toolId ?? ''}
              onChange={(e) => {
                const next = e.target.value;
                if (!isToolId(next)) return;
                // A cut-out keeps its transparency only in PNG or WebP: never flatten it into a JPEG by default.
                const format = next === 'remove_background' && exportSettings.format === 'jpeg' ? 'png' : exportSettings.format;
                onChange({ ...value, request: requestForTool(next, request) as RecipeInput['request'], export: { ...exportSettings, format } });
              }}
            >
              {[...TOOLS.values()].map((t) => (
                <option key={t.id} value={t.id}>
                  {t.id.replaceAll('_', ' ')} · {t.price} diamonds
                </option>
              ))}
            </select>
          </label>
        )}
        <p className="price" aria-live="polite">
          {price === null ? 'Price: pick a tool' : `Price: ${price} diamonds per photo`}
        </p>
      </div>

      {kind === 'tool' && tool && (
        <>
          <p className="muted">Each dropped photo goes into “{photoField(tool.id).key}”.</p>
          {tool.imageKeys.includes('fashion_model') && (
            <CatalogPicker
              label="Fashion model"
              optional={!tool.required.some((r) => r.field === 'fashion_model')}
              options={models.map((m) => ({ id: m.id, name: m.name, imageUrl: m.imageUrl, detail: m.gender }))}
              value={typeof request.images?.fashion_model === 'string' ? request.images.fashion_model : null}
              onChange={(id) => setImage('fashion_model', id)}
              filters={
                <select aria-label="Gender" value={gender} onChange={(e) => setGender(e.target.value as typeof gender)}>
                  <option value="all">All</option>
                  <option value="female">Women</option>
                  <option value="male">Men</option>
                </select>
              }
            />
          )}
          {tool.imageKeys.includes('venue') && (
            <CatalogPicker
              label="Venue"
              optional
              options={(catalog?.venues ?? []).map((v) => ({ id: v.id, name: v.name, imageUrl: v.imageUrl, detail: v.category }))}
              value={typeof request.images?.venue === 'string' ? request.images.venue : null}
              onChange={(id) => setImage('venue', id)}
            />
          )}
          {tool.fields.includes('pose') && (
            <CatalogPicker
              label={poseType === 'default' ? 'Pose' : `Pose (${poseType})`}
              optional
              options={poses.map((p) => ({ id: p.id, name: p.name, imageUrl: p.imageUrl }))}
              value={typeof request.pose === 'string' ? request.pose : null}
              onChange={(id) => setField('pose', id ?? undefined)}
            />
          )}
          <div className="row">
            {tool.fields.includes('ratio') && (
              <Choice label="Ratio" value={request.ratio} options={toolId === 'virtual_model' ? VIRTUAL_MODEL_RATIOS : RATIOS} optional onChange={(v) => setField('ratio', v)} />
            )}
            {tool.fields.includes('shotType') && <Choice label="Shot type" value={request.shotType} options={SHOT_TYPES} onChange={(v) => setField('shotType', v)} />}
            {tool.fields.includes('stylePreset') && <Choice label="Style" value={request.stylePreset} options={STYLE_PRESETS} onChange={(v) => setField('stylePreset', v)} />}
            {tool.fields.includes('jewelryType') && <Choice label="Jewelry type" value={request.jewelryType} options={JEWELRY_TYPES} onChange={(v) => setField('jewelryType', v)} />}
            {tool.fields.includes('targetRatio') && (
              <label>
                Target ratio
                <input value={String(request.targetRatio ?? '')} onChange={(e) => setField('targetRatio', e.target.value)} placeholder="4:5" />
              </label>
            )}
            {tool.fields.includes('backgroundColor') && (
              <label>
                Background
                <input value={String(request.backgroundColor ?? '')} onChange={(e) => setField('backgroundColor', e.target.value)} placeholder="#f4f1ea" />
              </label>
            )}
            {tool.fields.includes('duration') && (
              <label>
                Seconds
                <input type="number" min={1} max={10} value={Number(request.duration ?? 5)} onChange={(e) => setField('duration', Number(e.target.value))} />
              </label>
            )}
          </div>
          {tool.fields.includes('motionPrompt') && (
            <label className="block">
              Camera motion
              <input value={String(request.motionPrompt ?? '')} onChange={(e) => setField('motionPrompt', e.target.value)} placeholder="slow zoom in" />
            </label>
          )}
          {tool.fields.includes('customPrompt') &&
            (isRequiredField(toolId, 'customPrompt') ? (
              <label className="block">
                Instructions (required)
                <textarea
                  rows={2}
                  value={String(request.customPrompt ?? '')}
                  onChange={(e) => setField('customPrompt', e.target.value.trim() ? e.target.value : undefined)}
                  aria-invalid={request.customPrompt === undefined}
                  placeholder="What to change, e.g. remove the creases"
                />
              </label>
            ) : (
              <label className="block">
                Extra instructions (optional)
                <textarea rows={2} value={String(request.customPrompt ?? '')} onChange={(e) => setField('customPrompt', e.target.value.trim() ? e.target.value : undefined)} />
              </label>
            ))}
        </>
      )}

      {kind === 'ready' && (
        <>
          <CatalogPicker
            label="Ready shoot"
            options={(catalog?.readySets ?? []).map((r) => ({ id: r.id, name: r.name, imageUrl: r.coverUrl, detail: `${r.shotCount} shots · ${r.category}` }))}
            value={typeof request.readyTemplateSetId === 'string' ? request.readyTemplateSetId : null}
            onChange={(id) => id && setRequest({ readyTemplateSetId: id, images: request.images ?? { garment_photo: PHOTO_PLACEHOLDER } })}
          />
          {readySet && (
            <fieldset>
              <legend>Shots ({readySet.shots.length})</legend>
              {readySet.shots.map((shot) => {
                const chosen = Array.isArray(request.shotIds) ? (request.shotIds as string[]) : null;
                return (
                  <label key={shot.id} className="check">
                    <input
                      type="checkbox"
                      checked={!chosen || chosen.includes(shot.id)}
                      onChange={(e) => {
                        const all = readySet.shots.map((s) => s.id);
                        const current = chosen ?? all;
                        const next = e.target.checked ? [...current, shot.id] : current.filter((id) => id !== shot.id);
                        setField('shotIds', next.length === all.length ? undefined : next);
                      }}
                    />
                    {shot.name} <small className="muted">({shot.fashionModel}, {shot.venue}, {shot.ratio})</small>
                  </label>
                );
              })}
            </fieldset>
          )}
        </>
      )}

      {kind === 'look' &&
        (looks.length === 0 ? (
          <p className="muted">No saved looks yet. In Review, “Save look” keeps a result’s styling for later batches.</p>
        ) : (
          <CatalogPicker
            label="Saved look"
            options={looks.map((l) => ({ id: l.id, name: l.label, imageUrl: l.coverUrl, detail: l.toolId }))}
            value={typeof request.templateSetId === 'string' ? request.templateSetId : null}
            onChange={(id) => {
              const look = looks.find((l) => l.id === id);
              if (!look) return;
              const photo = photoField(look.toolId);
              setRequest({ templateSetId: look.id, images: { [photo.key]: photo.array ? [PHOTO_PLACEHOLDER] : PHOTO_PLACEHOLDER } });
            }}
          />
        ))}

      <fieldset>
        <legend>Export</legend>
        <div className="row">
          <Choice label="Preset" value={exportSettings.preset} options={EXPORT_PRESETS} onChange={(v) => v && setExport({ preset: v as ExportSettings['preset'] })} />
          <Choice label="Format" value={exportSettings.format} options={EXPORT_FORMATS} onChange={(v) => v && setExport({ format: v as ExportSettings['format'] })} />
          <label>
            Quality
            <input type="number" min={1} max={100} value={exportSettings.quality} onChange={(e) => setExport({ quality: Number(e.target.value) })} />
          </label>
          <label>
            File names
            <input value={exportSettings.naming} onChange={(e) => setExport({ naming: e.target.value })} aria-describedby="naming-preview" />
          </label>
        </div>
        <NamingPreview
          id="naming-preview"
          naming={exportSettings.naming}
          format={exportSettings.format}
          {...(folderPath ? { folderPath } : {})}
          tool={kind === 'ready' ? 'catalog' : kind === 'look' ? (looks.find((l) => l.id === request.templateSetId)?.toolId ?? 'template') : (toolId ?? 'tool')}
          {...(readySet ? { shots: Array.isArray(request.shotIds) ? (request.shotIds as string[]) : readySet.shots.map((s) => s.id) } : {})}
          onError={setNamingError}
        />
        {kind === 'ready' && !/\{(shot|n)\}/.test(exportSettings.naming) ? <p className="problem">Every shot of a photo would get the same name: add {'{shot}'} to the pattern.</p> : null}
      </fieldset>

      <div className="form-footer">
        <p className={problem ? 'problem' : 'ok'} role="status" aria-live="polite">
          {problem ? `Not ready: ${problem}` : 'Recipe is valid.'}
        </p>
        {footer}
      </div>
    </div>
  );
}

function Choice(props: { label: string; value: unknown; options: readonly string[]; optional?: boolean; onChange(value: string | undefined): void }) {
  return (
    <label>
      {props.label}
      <select value={typeof props.value === 'string' ? props.value : ''} onChange={(e) => props.onChange(e.target.value || undefined)}>
        {props.optional && <option value="">Default</option>}
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o.replaceAll('_', ' ')}
          </option>
        ))}
      </select>
    </label>
  );
}
