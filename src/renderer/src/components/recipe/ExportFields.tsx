/** A recipe's export settings: preset, format, quality and the file-name pattern with its preview. */
import {
  EXPORT_FORMATS,
  EXPORT_PRESET_LABELS,
  EXPORT_PRESETS,
  type ExportSettings,
} from '../../../../shared/studio';
import { Choice } from '../Choice';
import { NamingPreview } from '../NamingPreview';

type Props = {
  settings: ExportSettings;
  onChange(patch: Partial<ExportSettings>): void;
  folderPath?: string;
  /** The `{tool}` token, and the shots of a ready shoot (`{shot}`). */
  tool: string;
  shots?: string[];
  readyShoot: boolean;
  onNamingError(problem: string | null): void;
};

export function ExportFields({
  settings,
  onChange,
  folderPath,
  tool,
  shots,
  readyShoot,
  onNamingError,
}: Props) {
  return (
    <fieldset>
      <legend>Export</legend>
      <div className="row">
        <Choice
          label="Preset"
          value={settings.preset}
          options={EXPORT_PRESETS}
          labels={EXPORT_PRESET_LABELS}
          onChange={(v) => v && onChange({ preset: v as ExportSettings['preset'] })}
        />
        <Choice
          label="Format"
          value={settings.format}
          options={EXPORT_FORMATS}
          onChange={(v) => v && onChange({ format: v as ExportSettings['format'] })}
        />
        <label>
          Quality
          <input
            type="number"
            min={1}
            max={100}
            value={settings.quality}
            onChange={(e) => onChange({ quality: Number(e.target.value) })}
          />
        </label>
        <label>
          File names
          <input
            value={settings.naming}
            onChange={(e) => onChange({ naming: e.target.value })}
            aria-describedby="naming-preview"
          />
        </label>
      </div>
      <NamingPreview
        id="naming-preview"
        naming={settings.naming}
        format={settings.format}
        {...(folderPath ? { folderPath } : {})}
        tool={tool}
        {...(shots ? { shots } : {})}
        onError={onNamingError}
      />
      {readyShoot && !/\{(shot|n)\}/.test(settings.naming) ? (
        <p className="problem">
          Every shot of a photo would get the same name: add {'{shot}'} to the pattern.
        </p>
      ) : null}
    </fieldset>
  );
}
