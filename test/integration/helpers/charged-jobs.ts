/**
 * Jobs created and charged through the real core's service, for tests that then break what runs
 * them (the database, the blob store, the worker): a new account, an uploaded garment photo, and
 * the job's id with the key's auth.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Core } from '../../../src/core';
import { garmentPng } from './images';

async function accountWithPhoto(core: Core, emailPrefix: string, diamonds: number) {
  const { apiKey } = await core.admin.createAccount({
    email: `${emailPrefix}-${randomBytes(4).toString('hex')}@example.test`,
    diamonds,
  });
  const auth = `Bearer ${apiKey}`;
  const upload = await core.service.upload(auth, await garmentPng());
  return { auth, url: (upload.body as { url: string }).url };
}

/** A charged one-shot photo_enhance job of a new account holding 10 diamonds. */
export async function chargedJob(
  core: Core,
  emailPrefix: string,
): Promise<{ id: string; auth: string }> {
  const { auth, url } = await accountWithPhoto(core, emailPrefix, 10);
  const created = await core.service.createGeneration(auth, {
    toolId: 'photo_enhance',
    images: { user_photo: url },
  });
  expect(created.status).toBe(202);
  return { id: (created.body as { id: string }).id, auth };
}

/** A charged catalog job of a ready set's first `shots` shots (one unit each). */
export async function chargedPack(
  core: Core,
  emailPrefix: string,
  shots: number,
  diamonds = 100,
): Promise<{ id: string; auth: string; diamonds: number }> {
  const { auth, url } = await accountWithPhoto(core, emailPrefix, diamonds);
  const sets = (await core.service.listReadySets(auth, { limit: 100 })).body as {
    templateSets: { id: string; shots: { id: string }[] }[];
  };
  const set = sets.templateSets.find((s) => s.shots.length >= shots)!;
  const created = await core.service.createCatalogJob(auth, {
    readyTemplateSetId: set.id,
    images: { garment_photo: url },
    shotIds: set.shots.slice(0, shots).map((s) => s.id),
  });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  return { id: (created.body as { mediaItemId: string }).mediaItemId, auth, diamonds };
}
