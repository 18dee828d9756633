/**
 * Team mode (review rev28, defect 1): a creation whose charge transaction loses its PostgreSQL
 * connection at COMMIT. Cut after the COMMIT reached the server, the job was charged and runs:
 * the answer must be its 202 (it said "500 Internal error; nothing was charged", and a client
 * following the spec, with no Idempotency-Key, created it again and paid twice). Cut before the
 * COMMIT, nothing was charged and the answer may say so. The COMMIT lost on the way, its
 * transaction still open on the server, nobody can tell yet: a 503 that names the job to look up
 * and promises nothing.
 *
 * The core, its service and PostgreSQL store are the real ones; the connection goes through a
 * loopback proxy that makes the cut (helpers/pg-commit-cut-proxy.ts).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core';
import type { ServiceResponse } from '../../src/core/service';
import { removeDir } from './helpers/api';
import { garmentPng } from './helpers/images';
import {
  startCommitCutProxy,
  type CommitCut,
  type CommitCutProxy,
} from './helpers/pg-commit-cut-proxy';
import { localProvider } from './helpers/providers';
import { describePostgres } from '../support/postgres';

type Kind = 'generation' | 'catalog';

describePostgres('team mode: a creation whose COMMIT goes unanswered', (databaseUrl) => {
  const cores: Core[] = [];
  const proxies: CommitCutProxy[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const p of proxies) p.releaseHeld();
    await Promise.all(cores.splice(0).map((c) => c.close()));
    await Promise.all(proxies.splice(0).map((p) => p.close()));
    for (const d of dirs.splice(0)) removeDir(d);
  });

  /** An API-only process whose database connections go through the cutting proxy. */
  async function apiBehindProxy() {
    const schema = `cut_${randomBytes(4).toString('hex')}`;
    const url = new URL(databaseUrl());
    url.searchParams.set('schema', schema);
    const proxy = await startCommitCutProxy(url.toString());
    proxies.push(proxy);
    const dir = path.join(os.tmpdir(), `dropshoot-commitcut-${schema}`);
    dirs.push(dir);
    const log: string[] = [];
    const core = await openCore({
      dataDir: dir,
      databaseUrl: proxy.url,
      workers: 0,
      provider: localProvider(),
      log: (m) => log.push(m),
    });
    cores.push(core);
    const { apiKey, keyId } = await core.admin.createAccount({
      email: `cut-${randomBytes(4).toString('hex')}@example.test`,
      diamonds: 40,
    });
    const auth = `Bearer ${apiKey}`;
    const upload = await core.service.upload(auth, await garmentPng());
    const photoUrl = (upload.body as { url: string }).url;
    const sets = (await core.service.listReadySets(auth, { limit: 100 })).body as {
      templateSets: { id: string; shots: { id: string }[] }[];
    };
    const set = sets.templateSets.find((s) => s.shots.length >= 3)!;
    /** The creation, as a client written from the spec sends it: no Idempotency-Key. */
    const create = (kind: Kind): Promise<ServiceResponse> =>
      kind === 'generation'
        ? core.service.createGeneration(auth, {
            toolId: 'photo_enhance',
            images: { user_photo: photoUrl },
          })
        : core.service.createCatalogJob(auth, {
            readyTemplateSetId: set.id,
            images: { garment_photo: photoUrl },
            shotIds: set.shots.slice(0, 3).map((s) => s.id),
          });
    const { accountId } = (await core.store.keys.findActiveById(keyId))!;
    const ledger = () => core.store.ledger.entriesFor(accountId);
    return { core, proxy, auth, create, ledger, log };
  }

  const idOf = (r: ServiceResponse) =>
    (r.body as { id?: string; mediaItemId?: string }).id ??
    (r.body as { mediaItemId?: string }).mediaItemId;

  for (const kind of ['generation', 'catalog'] as const) {
    it(`${kind}: the COMMIT landed, its answer lost: 202 with the job, charged once (a client that believes a 500 pays twice)`, async () => {
      const { proxy, create, ledger, auth, core } = await apiBehindProxy();
      proxy.armed = 'after-commit';
      const first = await create(kind);
      expect(proxy.cuts).toBe(1);
      // The spec's client retries whatever is not a 202 (it was told nothing was charged).
      const answers = [first];
      if (first.status !== 202) answers.push(await create(kind));

      const charges = (await ledger()).filter((e) => e.kind === 'charge');
      const heard = answers.map((a) => `${a.status} ${JSON.stringify(a.body)}`).join(' | ');
      expect(charges.length, `charges; the client heard: ${heard}`).toBe(1);
      expect(first.status, heard).toBe(202);
      expect(charges[0]!.jobId).toBe(idOf(first));
      const polled = await core.service.getGeneration(auth, idOf(first)!);
      expect(polled.status).toBe(200);
    });
  }

  it('the connection cut before the COMMIT reached the server: a 503 that says nothing was charged, and nothing was', async () => {
    const { proxy, create, ledger } = await apiBehindProxy();
    proxy.armed = 'before-commit';
    const answer = await create('generation');
    expect(proxy.cuts).toBe(1);
    expect(answer.status).toBe(503);
    expect((answer.body as { error: string }).error).toMatch(/nothing was charged/);
    expect((await ledger()).filter((e) => e.kind === 'charge')).toHaveLength(0);
  });

  it('the COMMIT lost on the way, its transaction still open on the server: a 503 that names the job and promises nothing', async () => {
    const { proxy, create, ledger, core, auth } = await apiBehindProxy();
    proxy.armed = 'commit-lost' satisfies CommitCut;
    const answer = await create('generation');
    expect(proxy.cuts).toBe(1);
    expect(answer.status).toBe(503);
    const error = (answer.body as { error: string }).error;
    expect(error).not.toMatch(/nothing was charged/);
    const jobId = /\b(job_[A-Za-z0-9_-]+)/.exec(error)?.[1];
    expect(jobId, error).toBeDefined();
    // The server's side goes: its transaction rolls back, and the job named is not there.
    proxy.releaseHeld();
    let polled: ServiceResponse;
    for (let i = 0; ; i++) {
      polled = await core.service.getGeneration(auth, jobId!);
      if (polled.status === 404 || i > 40) break;
      await sleep(100);
    }
    expect(polled.status).toBe(404);
    expect((await ledger()).filter((e) => e.kind === 'charge')).toHaveLength(0);
  });
});
