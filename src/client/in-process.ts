/**
 * The embedded default: the core runs in this process, no key and no network. A local account
 * is created on first run; requests still go through the service's rules (validation, ledger,
 * daily cap) exactly as over HTTP.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { openCore, type Core, type CoreOptions } from '../core';
import { loadCatalog } from '../core/catalog';
import type { Authorized, ServiceResponse } from '../core/service';
import { idempotencyFor } from '../core/idempotency';
import { ApiError, type Download, type ServiceClient, type WriteOptions } from './service-client';
import { judgeMedia } from './media-type';
import { fetchDownload } from './download';

export const LOCAL_ACCOUNT_EMAIL = 'local@dropshoot.invalid';
/** The embedded account starts with enough diamonds for a day's work; admins can grant more. */
export const LOCAL_STARTING_DIAMONDS = 10_000;
const LOCAL_DAILY_CAP = 1_000_000;

function unwrap<T>(response: ServiceResponse): T {
  const body = response.body as { success: boolean; error?: string };
  if (response.status >= 400 || !body.success)
    throw new ApiError(response.status, body.error ?? 'request failed');
  const { success: _success, ...rest } = body;
  return rest as T;
}

/** Finds (or creates) the embedded account's key id, through the core's admin operations. */
async function localKeyId(core: Core): Promise<string> {
  const existing = await core.admin.firstActiveKeyId(LOCAL_ACCOUNT_EMAIL);
  if (existing) return existing;
  return (
    await core.admin.createAccount({
      email: LOCAL_ACCOUNT_EMAIL,
      diamonds: LOCAL_STARTING_DIAMONDS,
      dailyCap: LOCAL_DAILY_CAP,
    })
  ).keyId;
}

const EMBEDDED_MAX_INTERRUPTIONS = 20;
/** A stored file's public path (`/files/<id>`), as the resolver hands them out. */
const OWN_FILE_PATH = /^\/files\/([A-Za-z0-9_-]{1,64})$/;

export class InProcessClient implements ServiceClient {
  readonly origin = 'embedded';
  readonly keyFingerprint: string;

  private constructor(
    readonly core: Core,
    private readonly keyId: string,
    private readonly ownsCore: boolean,
  ) {
    this.keyFingerprint = createHash('sha256')
      .update(`dropshoot/embedded-key/v1\0${this.keyId}`)
      .digest('hex')
      .slice(0, 24);
  }

  /** A client of an open core, on its local account (created on first use); `ownsCore`: close closes the core. */
  static async create(core: Core, ownsCore = false): Promise<InProcessClient> {
    return new InProcessClient(core, await localKeyId(core), ownsCore);
  }

  /** `catalogDir`: where the packaged app keeps the catalog (the core's default is the source tree's). */
  static async open(options: CoreOptions & { catalogDir?: string }): Promise<InProcessClient> {
    const { catalogDir, ...coreOptions } = options;
    const catalog = catalogDir ? { catalog: loadCatalog(catalogDir) } : {};
    // Embedded mode fetches images for this machine's own user: private addresses are fine. The
    // embedded core dies with the app (quit, sleep, kill), which says nothing about the shot it
    // was making, so only a long crash loop fails a shot here.
    const core = await openCore({
      allowPrivateUrls: true,
      maxInterruptions: EMBEDDED_MAX_INTERRUPTIONS,
      ...catalog,
      ...coreOptions,
    });
    try {
      return await InProcessClient.create(core, true);
    } catch (err) {
      await core.close();
      throw err;
    }
  }

  private async auth(): Promise<Authorized> {
    try {
      return await this.core.service.authorizeKeyId(this.keyId);
    } catch (err) {
      const status = (err as { status?: number }).status ?? 500;
      throw new ApiError(status, err instanceof Error ? err.message : String(err));
    }
  }

  private idem(endpoint: string, body: Buffer | string, options?: WriteOptions) {
    try {
      return idempotencyFor(endpoint, options?.idempotencyKey, body);
    } catch (err) {
      throw new ApiError(400, err instanceof Error ? err.message : String(err));
    }
  }

  async listModels() {
    return unwrap<{ models: Awaited<ReturnType<ServiceClient['listModels']>> }>(
      await this.core.service.listModels(await this.auth()),
    ).models;
  }
  async listFashionModels(query: Parameters<ServiceClient['listFashionModels']>[0] = {}) {
    return unwrap<{ fashionModels: Awaited<ReturnType<ServiceClient['listFashionModels']>> }>(
      await this.core.service.listFashionModels(await this.auth(), query),
    ).fashionModels;
  }
  async listVenues(query: Parameters<ServiceClient['listVenues']>[0] = {}) {
    return unwrap<{ venues: Awaited<ReturnType<ServiceClient['listVenues']>> }>(
      await this.core.service.listVenues(await this.auth(), query),
    ).venues;
  }
  async listPoses(query: Parameters<ServiceClient['listPoses']>[0] = {}) {
    return unwrap<{ poses: Awaited<ReturnType<ServiceClient['listPoses']>> }>(
      await this.core.service.listPoses(await this.auth(), query),
    ).poses;
  }
  async upload(data: Buffer, options?: WriteOptions) {
    const idem = this.idem('uploads', data, options);
    const body = unwrap<{ id: string; url: string }>(
      await this.core.service.upload(await this.auth(), data, idem),
    );
    return { ...body, idempotencyHonoured: idem !== undefined };
  }
  async createGeneration(
    request: Parameters<ServiceClient['createGeneration']>[0],
    options?: WriteOptions,
  ) {
    const idem = this.idem('generations', JSON.stringify(request), options);
    const body = unwrap<{ id: string; status: 'processing' }>(
      await this.core.service.createGeneration(await this.auth(), request, idem),
    );
    return { ...body, idempotencyHonoured: idem !== undefined };
  }
  async getGeneration(id: string) {
    return unwrap<Awaited<ReturnType<ServiceClient['getGeneration']>>>(
      await this.core.service.getGeneration(await this.auth(), id),
    );
  }
  async createTemplateSet(request: Parameters<ServiceClient['createTemplateSet']>[0]) {
    return unwrap<{ id: string }>(
      await this.core.service.createTemplateSet(await this.auth(), request),
    );
  }
  async listTemplateSets() {
    return unwrap<{ templateSets: Awaited<ReturnType<ServiceClient['listTemplateSets']>> }>(
      await this.core.service.listTemplateSets(await this.auth()),
    ).templateSets;
  }
  async deleteTemplateSet(id: string) {
    unwrap(await this.core.service.deleteTemplateSet(await this.auth(), id));
  }
  async getAccount() {
    return unwrap<Awaited<ReturnType<ServiceClient['getAccount']>>>(
      await this.core.service.getAccount(await this.auth()),
    );
  }
  async listReadySets(query: Parameters<ServiceClient['listReadySets']>[0] = {}) {
    return unwrap<Awaited<ReturnType<ServiceClient['listReadySets']>>>(
      await this.core.service.listReadySets(await this.auth(), query),
    );
  }
  async getReadySet(id: string) {
    return unwrap<{ templateSet: Awaited<ReturnType<ServiceClient['getReadySet']>> }>(
      await this.core.service.getReadySet(await this.auth(), id),
    ).templateSet;
  }
  async createCatalogJob(
    request: Parameters<ServiceClient['createCatalogJob']>[0],
    options?: WriteOptions,
  ) {
    const idem = this.idem('catalog-jobs', JSON.stringify(request), options);
    const body = unwrap<
      Omit<Awaited<ReturnType<ServiceClient['createCatalogJob']>>, 'idempotencyHonoured'>
    >(await this.core.service.createCatalogJob(await this.auth(), request, idem));
    return { ...body, idempotencyHonoured: idem !== undefined };
  }

  /**
   * Own URLs are read from the blob store (through its stream, so blobs in a bucket work as
   * files do) and the catalog; anything else is fetched. Bytes decide the type.
   */
  async download(url: string): Promise<Download> {
    const local = await this.core.resolver.localFile(url);
    if (!local) return fetchDownload(url);
    const blobId = OWN_FILE_PATH.exec(new URL(url).pathname)?.[1];
    const blob = blobId === undefined ? undefined : await this.core.blobs.get(blobId);
    const data = blob
      ? Buffer.concat(await (await this.core.blobs.open(blob.sha256)).toArray())
      : await fs.promises.readFile(local.path);
    return {
      data,
      servedAs: local.mime,
      ...judgeMedia(data, { what: `the file at ${url}`, servedAs: local.mime }),
    };
  }

  async close(): Promise<void> {
    if (this.ownsCore) await this.core.close();
  }
}
