/**
 * Opens the service client a data folder's engine uses: the embedded core (loaded only in that
 * mode, so a remote engine never loads SQLite or sharp for it) or a remote /v1 service.
 */
import type { EngineService } from '../shared/engine-process';
import { embeddedCoreDir } from './data-folder';
import { HttpClient } from './http';
import type { ServiceClient } from './service-client';

/**
 * Where the embedded core keeps its rows and files when not under the data folder (team mode,
 * issue 14): a PostgreSQL URL and an S3-compatible bucket URL, as `serve` takes them. Absent:
 * SQLite and files under `<data>/core/`, as always; `<data>/core/` then holds scratch copies only.
 */
export type EmbeddedStorage = { databaseUrl?: string; blobsUrl?: string };

/**
 * The service to open. The CLI may add `storage` to the embedded choice; the desktop's engine
 * process never does (its start message is validated strictly), so it keeps the default.
 */
export type ServiceChoice =
  EngineService | (Extract<EngineService, { mode: 'embedded' }> & { storage?: EmbeddedStorage });

/** Call with the data folder locked: the embedded core resumes its unfinished jobs as it opens. */
export async function openServiceClient(
  dataDir: string,
  service: ServiceChoice,
): Promise<ServiceClient> {
  if (service.mode === 'remote')
    return new HttpClient({ baseUrl: service.baseUrl, apiKey: service.apiKey });
  const storage = 'storage' in service ? service.storage : undefined;
  const { InProcessClient } = await import('./in-process');
  return InProcessClient.open({
    dataDir: embeddedCoreDir(dataDir),
    providerKeys: service.providerKeys,
    ...(service.catalogDir ? { catalogDir: service.catalogDir } : {}),
    ...(storage?.databaseUrl !== undefined ? { databaseUrl: storage.databaseUrl } : {}),
    ...(storage?.blobsUrl !== undefined ? { blobsUrl: storage.blobsUrl } : {}),
  });
}
