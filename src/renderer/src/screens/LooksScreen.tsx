import { useEffect, type ReactNode } from 'react';
import { PHOTO_PLACEHOLDER } from '../../../shared/studio';
import { getTool } from '../../../shared/tools';
import { EmptyState } from '../components/EmptyState';
import { useCatalog } from '../stores/catalog-store';
import { act, useUi } from '../stores/ui-store';
import { studio } from '../transport';

const EXPORT = {
  preset: 'original',
  format: 'jpeg',
  quality: 90,
  naming: '{name}-{shot}-{n}',
} as const;

/** One card of either list: a cover, a title, a muted line and its buttons. */
function Card(props: {
  coverUrl: string | null;
  title: string;
  detail: ReactNode;
  children: ReactNode;
}) {
  return (
    <li className="card">
      {props.coverUrl ? (
        <img src={studio().mediaUrl(props.coverUrl)} alt="" width={72} height={90} />
      ) : null}
      <div>
        <strong>{props.title}</strong>
        <div className="muted">{props.detail}</div>
      </div>
      <div className="actions">{props.children}</div>
    </li>
  );
}

export function LooksScreen() {
  const looks = useCatalog((s) => s.looks);
  const catalog = useCatalog((s) => s.catalog);
  useEffect(() => {
    act(() =>
      Promise.all([useCatalog.getState().loadLooks(), useCatalog.getState().loadCatalog()]),
    );
  }, []);
  const start = useUi((s) => s.startFolderFrom);

  return (
    <section aria-label="Looks">
      <h2>Your looks</h2>
      {looks.length === 0 ? (
        <EmptyState title="No looks yet">
          In Review, pick a result you like and press “Save look” to reuse its model, venue, pose
          and style.
        </EmptyState>
      ) : (
        <ul className="cards" aria-label="Your looks">
          {looks.map((look) => {
            const tool = getTool(look.toolId);
            const photoKey =
              tool.required.find((r) => r.field !== 'fashion_model')?.oneOf[0] ?? 'garment_photo';
            return (
              <Card
                key={look.id}
                coverUrl={look.coverUrl}
                title={look.label}
                detail={`${look.toolId.replaceAll('_', ' ')} · ${look.ratio ?? 'default ratio'}`}
              >
                <button
                  type="button"
                  onClick={() =>
                    start({
                      request: {
                        templateSetId: look.id,
                        images: {
                          [photoKey]: tool.arrayKeys.includes(photoKey)
                            ? [PHOTO_PLACEHOLDER]
                            : PHOTO_PLACEHOLDER,
                        },
                      },
                      export: EXPORT,
                    })
                  }
                >
                  Start a folder
                </button>
                <button
                  type="button"
                  onClick={() => act(() => useCatalog.getState().deleteLook(look.id))}
                >
                  Delete
                </button>
              </Card>
            );
          })}
        </ul>
      )}
      <h2>Ready shoots</h2>
      <ul className="cards" aria-label="Ready shoots">
        {(catalog?.readyShoots ?? []).map((shoot) => (
          <Card
            key={shoot.id}
            coverUrl={shoot.coverUrl}
            title={shoot.name}
            detail={`${shoot.category} · ${shoot.shotCount} shots: ${shoot.shots.map((s) => s.name).join(', ')}`}
          >
            <button
              type="button"
              onClick={() =>
                start({
                  request: {
                    readyTemplateSetId: shoot.id,
                    images: { garment_photo: PHOTO_PLACEHOLDER },
                  },
                  export: EXPORT,
                })
              }
            >
              Start a folder
            </button>
          </Card>
        ))}
      </ul>
    </section>
  );
}
