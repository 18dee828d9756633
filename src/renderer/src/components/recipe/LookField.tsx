/** A look to apply to each photo. */
import { photoOnly, type EditableRequest } from '../../recipe/request';
import { useCatalog } from '../../stores/catalog-store';
import { CatalogPicker } from '../CatalogPicker';

export function LookField({
  request,
  setRequest,
}: {
  request: EditableRequest;
  setRequest(next: EditableRequest): void;
}) {
  const looks = useCatalog((s) => s.looks);
  if (looks.length === 0)
    return (
      <p className="muted">
        No looks yet. In Review, “Save look” keeps a result’s styling for later batches.
      </p>
    );
  return (
    <CatalogPicker
      label="Saved look"
      options={looks.map((l) => ({
        id: l.id,
        name: l.label,
        imageUrl: l.coverUrl,
        detail: l.toolId,
      }))}
      value={typeof request.templateSetId === 'string' ? request.templateSetId : null}
      onChange={(id) => {
        const look = looks.find((l) => l.id === id);
        if (look) setRequest({ templateSetId: look.id, images: photoOnly(look.toolId) });
      }}
    />
  );
}
