/**
 * Saved template sets ("looks"): what may be saved (a completed, saveable generation of the
 * account, or a saveable tool with a fashion model and optionally a venue), checked here; the
 * rows are the store's.
 */
import type { Catalog } from './catalog';
import type { Clock } from './clock';
import type { TemplateStyling } from './generation-request';
import type { ImageResolver } from './media/resolve';
import type { Store, TemplateSetRow } from './store/types';
import type { JobInput } from './jobs/job-input';
import { BadRequest, NotFound } from './errors';
import { newId } from './ids';
import { getTool, isToolId } from './tools';
import { imageUrlOf, poseOf } from './catalog-refs';
import {
  IdSchema,
  type TemplateSetCreate as CreateRequest,
  type TemplateSetEntry,
} from '../shared/api';

type Styling = Omit<TemplateStyling, 'id'>;

export class TemplateSets {
  constructor(
    private readonly deps: {
      store: Store;
      catalog: Catalog;
      resolver: ImageResolver;
      clock: Clock;
    },
  ) {}

  /** The account's set to apply to a generation, or 404. */
  async forGeneration(accountId: string, id: string): Promise<TemplateStyling> {
    const set = await this.deps.store.templates.get(accountId, id);
    if (!set) throw new NotFound(`Template set ${id} not found`);
    return set as TemplateSetRow & TemplateStyling;
  }

  /** Saves a set from a finished generation or from a tool and images; returns its id. */
  async create(accountId: string, req: CreateRequest): Promise<string> {
    const label = req.label?.trim();
    if (!label) throw new BadRequest('label is required');
    const saved =
      req.sourceMediaId !== undefined
        ? await this.fromJob(accountId, req.sourceMediaId, req)
        : { styling: await this.fromRequest(req), coverUrl: null, sourceJobId: null };
    const id = newId('ts', 12);
    await this.deps.store.templates.insert({
      id,
      accountId,
      label,
      ...saved.styling,
      coverUrl: saved.coverUrl,
      sourceJobId: saved.sourceJobId,
      createdAt: this.deps.clock.now().toISOString(),
    });
    return id;
  }

  /** The account's sets, catalog references shown as image URLs. */
  async list(accountId: string): Promise<TemplateSetEntry[]> {
    const { catalog, resolver } = this.deps;
    return (await this.deps.store.templates.list(accountId)).map((t) => ({
      ...(t as TemplateSetRow & Pick<TemplateSetEntry, 'toolId'>),
      images: Object.fromEntries(
        Object.entries(t.images).map(([field, ref]) => [
          field,
          imageUrlOf(catalog, resolver, field, ref),
        ]),
      ),
    }));
  }

  /** Deletes the account's set; false when there is none (or the id is not an id). */
  async delete(accountId: string, id: string): Promise<boolean> {
    return (
      IdSchema.safeParse(id).success && (await this.deps.store.templates.delete(accountId, id))
    );
  }

  private async fromJob(
    accountId: string,
    jobId: string,
    req: CreateRequest,
  ): Promise<{ styling: Styling; coverUrl: string | null; sourceJobId: string }> {
    if (req.toolId !== undefined || req.images !== undefined)
      throw new BadRequest('give either sourceMediaId or toolId with images, not both');
    const { store } = this.deps;
    const job = await store.jobs.get(jobId);
    if (!job || job.accountId !== accountId) throw new NotFound(`sourceMediaId ${jobId} not found`);
    if (job.status !== 'completed')
      throw new BadRequest(`sourceMediaId ${job.id} has not completed (status: ${job.status})`);
    if (job.kind === 'catalog')
      throw new BadRequest(
        'catalog jobs cannot be saved as template sets; replay the ready template set instead',
      );
    if (!isToolId(job.toolId) || !getTool(job.toolId).saveable)
      throw new BadRequest(`toolId '${job.toolId}' cannot be saved as a template set`);
    const input = JSON.parse(job.input) as JobInput;
    const styling: Styling = { toolId: job.toolId, ...input.styling };
    if (req.pose !== undefined) styling.pose = this.checkPose(req.pose);
    const first = (await store.jobs.resultsOf(job.id))[0];
    return {
      styling,
      coverUrl: first ? this.deps.resolver.fileUrl(first.blobId) : null,
      sourceJobId: job.id,
    };
  }

  private async fromRequest(req: CreateRequest): Promise<Styling> {
    if (req.toolId === undefined)
      throw new BadRequest('either sourceMediaId or toolId with images is required');
    if (!isToolId(req.toolId) || !getTool(req.toolId).saveable) {
      throw new BadRequest(
        `toolId '${req.toolId}' cannot be saved as a template set (saveable: virtual_model, outfit_photo, pro_studio, jewelry_on_model, clothing_ecom_pack, jewelry_ecom_pack)`,
      );
    }
    const images: Record<string, string> = {};
    for (const [field, value] of Object.entries(req.images ?? {})) {
      if (field !== 'fashion_model' && field !== 'venue')
        throw new BadRequest(`images.${field}: a template set saves only fashion_model and venue`);
      if (Array.isArray(value)) throw new BadRequest(`images.${field} takes one catalog id or URL`);
      await this.deps.resolver.resolve(value, field, req.toolId, null); // checked, not kept: the template saves the reference
      images[field] = value;
    }
    if (!images.fashion_model) throw new BadRequest('images.fashion_model is required');
    return {
      toolId: req.toolId,
      images,
      pose: req.pose === undefined ? null : this.checkPose(req.pose),
      shotType: req.shotType ?? null,
      stylePreset: req.stylePreset ?? null,
      ratio: req.ratio ?? null,
    };
  }

  private checkPose(id: string): string {
    poseOf(this.deps.catalog, id);
    return id;
  }
}
