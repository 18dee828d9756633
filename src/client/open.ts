/**
 * Opens the service client a data folder's engine uses: the embedded core (loaded only in that
 * mode, so a remote engine never loads SQLite or sharp for it) or a remote /v1 service.
 */
import type { EngineService } from '../shared/engine-process';
import { embeddedCoreDir } from './data-folder';
import { HttpClient } from './http';
import type { ServiceClient } from './service-client';

/** Call with the data folder locked: the embedded core resumes its unfinished jobs as it opens. */
export async function openServiceClient(
  dataDir: string,
  service: EngineService,
): Promise<ServiceClient> {
  if (service.mode === 'remote')
    return new HttpClient({ baseUrl: service.baseUrl, apiKey: service.apiKey });
  const { InProcessClient } = await import('./in-process');
  return InProcessClient.open({
    dataDir: embeddedCoreDir(dataDir),
    providerKeys: service.providerKeys,
    ...(service.catalogDir ? { catalogDir: service.catalogDir } : {}),
  });
}
