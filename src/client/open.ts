/**
 * Opens the service client a data folder's engine uses: the embedded core (loaded only in that
 * mode, so a remote engine never loads SQLite or sharp for it) or a remote /v1 service.
 */
import type { EngineService } from '../shared/engine-process';
import { embeddedCoreDir } from './data-folder';
import { HttpClient } from './http';
import type { ServiceClient } from './service-client';

/** Where the embedded core keeps its rows and files: see `EmbeddedStorageSchema`. */
export type { EmbeddedStorage } from '../shared/engine-process';

/** The service to open (the embedded choice may carry `storage`: PostgreSQL and a bucket). */
export type ServiceChoice = EngineService;

/** Call with the data folder locked: the embedded core resumes its unfinished jobs as it opens. */
export async function openServiceClient(
  dataDir: string,
  service: ServiceChoice,
): Promise<ServiceClient> {
  if (service.mode === 'remote')
    return new HttpClient({ baseUrl: service.baseUrl, apiKey: service.apiKey });
  const { storage } = service;
  const { InProcessClient } = await import('./in-process');
  return InProcessClient.open({
    dataDir: embeddedCoreDir(dataDir),
    providerKeys: service.providerKeys,
    ...(service.catalogDir ? { catalogDir: service.catalogDir } : {}),
    ...(storage?.databaseUrl !== undefined ? { databaseUrl: storage.databaseUrl } : {}),
    ...(storage?.blobsUrl !== undefined ? { blobsUrl: storage.blobsUrl } : {}),
  });
}
