/** A ready shoot to replay on each photo, and which of its shots. */
import { PHOTO_PLACEHOLDER } from '../../../../shared/studio';
import type { EditableRequest } from '../../recipe/request';
import { useCatalog } from '../../stores/catalog-store';
import { CatalogPicker } from '../CatalogPicker';

type Props = {
  request: EditableRequest;
  setRequest(next: EditableRequest): void;
  setField(field: string, value: unknown): void;
};

export function ReadyShootFields({ request, setRequest, setField }: Props) {
  const catalog = useCatalog((s) => s.catalog);
  const readyShoot = catalog?.readyShoots.find((r) => r.id === request.readyTemplateSetId);
  const chosen = Array.isArray(request.shotIds) ? (request.shotIds as string[]) : null;
  return (
    <>
      <CatalogPicker
        label="Ready shoot"
        options={(catalog?.readyShoots ?? []).map((r) => ({
          id: r.id,
          name: r.name,
          imageUrl: r.coverUrl,
          detail: `${r.shotCount} shots · ${r.category}`,
        }))}
        value={typeof request.readyTemplateSetId === 'string' ? request.readyTemplateSetId : null}
        onChange={(id) =>
          id &&
          setRequest({
            readyTemplateSetId: id,
            images: request.images ?? { garment_photo: PHOTO_PLACEHOLDER },
          })
        }
      />
      {readyShoot && (
        <fieldset>
          <legend>Shots ({readyShoot.shots.length})</legend>
          {readyShoot.shots.map((shot) => (
            <label key={shot.id} className="check">
              <input
                type="checkbox"
                checked={!chosen || chosen.includes(shot.id)}
                onChange={(e) => {
                  const all = readyShoot.shots.map((s) => s.id);
                  const current = chosen ?? all;
                  const next = e.target.checked
                    ? [...current, shot.id]
                    : current.filter((id) => id !== shot.id);
                  setField('shotIds', next.length === all.length ? undefined : next);
                }}
              />
              {shot.name}{' '}
              <small className="muted">
                ({shot.fashionModel}, {shot.venue}, {shot.ratio})
              </small>
            </label>
          ))}
        </fieldset>
      )}
    </>
  );
}
