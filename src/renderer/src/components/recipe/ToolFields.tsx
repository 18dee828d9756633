/** A tool's images (model, venue, pose) and fields, for the recipe builder. */
import { useState } from 'react';
import {
  JEWELRY_TYPES,
  RATIOS,
  SHOT_TYPES,
  STYLE_PRESETS,
  VIRTUAL_MODEL_RATIOS,
} from '../../../../shared/api';
import type { ToolSpec } from '../../../../shared/tools';
import { isRequiredField } from '../../recipe/problem';
import { photoField, type EditableRequest } from '../../recipe/request';
import { useCatalog } from '../../stores/catalog-store';
import { CatalogPicker } from '../CatalogPicker';
import { Choice } from '../Choice';

type Props = {
  tool: ToolSpec;
  request: EditableRequest;
  setField(field: string, value: unknown): void;
  setImage(key: string, value: string | null): void;
};

export function ToolFields({ tool, request, setField, setImage }: Props) {
  const catalog = useCatalog((s) => s.catalog);
  const [gender, setGender] = useState<'all' | 'female' | 'male'>('all');
  const models = (catalog?.fashionModels ?? []).filter(
    (m) => gender === 'all' || m.gender === gender,
  );
  const poseType =
    request.jewelryType && tool.id === 'jewelry_on_model' ? String(request.jewelryType) : 'default';
  const poses = (catalog?.poses ?? []).filter((p) => p.type === poseType);
  const has = (field: string) => (tool.fields as readonly string[]).includes(field);
  const text = (field: string) => String(request[field] ?? '');

  return (
    <>
      <p className="muted">Each dropped photo goes into “{photoField(tool.id).key}”.</p>
      {tool.imageKeys.includes('fashion_model') && (
        <CatalogPicker
          label="Fashion model"
          optional={!tool.required.some((r) => r.field === 'fashion_model')}
          options={models.map((m) => ({
            id: m.id,
            name: m.name,
            imageUrl: m.imageUrl,
            detail: m.gender,
          }))}
          value={
            typeof request.images?.fashion_model === 'string' ? request.images.fashion_model : null
          }
          onChange={(id) => setImage('fashion_model', id)}
          filters={
            <select
              aria-label="Gender"
              value={gender}
              onChange={(e) => setGender(e.target.value as typeof gender)}
            >
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
          options={(catalog?.venues ?? []).map((v) => ({
            id: v.id,
            name: v.name,
            imageUrl: v.imageUrl,
            detail: v.category,
          }))}
          value={typeof request.images?.venue === 'string' ? request.images.venue : null}
          onChange={(id) => setImage('venue', id)}
        />
      )}
      {has('pose') && (
        <CatalogPicker
          label={poseType === 'default' ? 'Pose' : `Pose (${poseType})`}
          optional
          options={poses.map((p) => ({ id: p.id, name: p.name, imageUrl: p.imageUrl }))}
          value={typeof request.pose === 'string' ? request.pose : null}
          onChange={(id) => setField('pose', id ?? undefined)}
        />
      )}
      <div className="row">
        {has('ratio') && (
          <Choice
            label="Ratio"
            value={request.ratio}
            options={tool.id === 'virtual_model' ? VIRTUAL_MODEL_RATIOS : RATIOS}
            optional
            onChange={(v) => setField('ratio', v)}
          />
        )}
        {has('shotType') && (
          <Choice
            label="Shot type"
            value={request.shotType}
            options={SHOT_TYPES}
            onChange={(v) => setField('shotType', v)}
          />
        )}
        {has('stylePreset') && (
          <Choice
            label="Style"
            value={request.stylePreset}
            options={STYLE_PRESETS}
            onChange={(v) => setField('stylePreset', v)}
          />
        )}
        {has('jewelryType') && (
          <Choice
            label="Jewelry type"
            value={request.jewelryType}
            options={JEWELRY_TYPES}
            onChange={(v) => setField('jewelryType', v)}
          />
        )}
        {has('targetRatio') && (
          <label>
            Target ratio
            <input
              value={text('targetRatio')}
              onChange={(e) => setField('targetRatio', e.target.value)}
              placeholder="4:5"
            />
          </label>
        )}
        {has('backgroundColor') && (
          <label>
            Background
            <input
              value={text('backgroundColor')}
              onChange={(e) => setField('backgroundColor', e.target.value)}
              placeholder="#f4f1ea"
            />
          </label>
        )}
        {has('duration') && (
          <label>
            Seconds
            <input
              type="number"
              min={1}
              max={10}
              value={Number(request.duration ?? 5)}
              onChange={(e) => setField('duration', Number(e.target.value))}
            />
          </label>
        )}
      </div>
      {has('motionPrompt') && (
        <label className="block">
          Camera motion
          <input
            value={text('motionPrompt')}
            onChange={(e) => setField('motionPrompt', e.target.value)}
            placeholder="slow zoom in"
          />
        </label>
      )}
      {has('customPrompt') &&
        (isRequiredField(tool.id, 'customPrompt') ? (
          <label className="block">
            Instructions (required)
            <textarea
              rows={2}
              value={text('customPrompt')}
              onChange={(e) =>
                setField('customPrompt', e.target.value.trim() ? e.target.value : undefined)
              }
              aria-invalid={request.customPrompt === undefined}
              placeholder="What to change, e.g. remove the creases"
            />
          </label>
        ) : (
          <label className="block">
            Extra instructions (optional)
            <textarea
              rows={2}
              value={text('customPrompt')}
              onChange={(e) =>
                setField('customPrompt', e.target.value.trim() ? e.target.value : undefined)
              }
            />
          </label>
        ))}
    </>
  );
}
