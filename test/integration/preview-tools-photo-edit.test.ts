/**
 * photo_edit offline on real garment photos (issue 11 item 4): what the instruction asks is done
 * to the photo (background colour, removal, brightness, crop), the garment itself is left alone,
 * and an instruction the offline editor cannot perform fails with a reason and is refunded.
 */
import { sharp } from '../../src/infra/sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editPhoto } from '../../src/core/providers/local/photo-edit';
import { download, expectSuccess, type Api } from './helpers/api';
import { createAccount } from './helpers/cli';
import { ledgerOfJob } from './helpers/core-storage';
import { startTestServer, type TestServer } from './helpers/server';
import { edgeDistance, evalPresent, garmentMask, garmentPhoto, rgbOf } from './preview-tools-eval';

const present = evalPresent();
if (!present) console.log('photo_edit on real photos skipped: ../shared/eval is missing');

const LIGHT_GREY = 211;

/** Background pixels beyond `band` px of the garment that hold `rgb` (±4), and the garment's change. */
async function measure(id: string, output: Buffer, rgb: [number, number, number], band = 8) {
  const photo = await rgbOf(await garmentPhoto(id));
  const edited = await rgbOf(output);
  const mask = await garmentMask(id);
  const dist = edgeDistance(mask);
  let far = 0;
  let coloured = 0;
  let inside = 0;
  let diff = 0;
  for (let i = 0; i < mask.mask.length; i++) {
    if (!mask.mask[i] && dist[i]! > band) {
      far++;
      if ([0, 1, 2].every((c) => Math.abs(edited.data[i * 3 + c]! - rgb[c]!) <= 4)) coloured++;
    } else if (mask.mask[i] && dist[i]! > 4) {
      inside++;
      for (let c = 0; c < 3; c++)
        diff += Math.abs(edited.data[i * 3 + c]! - photo.data[i * 3 + c]!);
    }
  }
  return { backdrop: coloured / far, garmentChange: diff / inside / 3 };
}

describe.skipIf(!present)('photo_edit on real garment photos', () => {
  // Coloured, dark, and white-on-white with a cast shadow.
  for (const id of ['00055_00', '03032_00', '051988_1']) {
    it(
      `"make the background light grey" gives a light grey backdrop around the unchanged garment (${id})`,
      { timeout: 120_000 },
      async () => {
        const out = await editPhoto(await garmentPhoto(id), 'make the background light grey');
        expect(out.mime).toBe('image/jpeg');
        const m = await measure(id, out.data, [LIGHT_GREY, LIGHT_GREY, LIGHT_GREY]);
        console.log(
          `${id}: light grey backdrop ${(100 * m.backdrop).toFixed(2)} % of the background beyond 8 px; garment mean change ${m.garmentChange.toFixed(2)} levels`,
        );
        expect(m.backdrop).toBeGreaterThanOrEqual(0.99);
        expect(m.garmentChange).toBeLessThanOrEqual(4);
      },
    );
  }

  it('removes the background to a transparent PNG', { timeout: 120_000 }, async () => {
    const id = '00055_00';
    const out = await editPhoto(await garmentPhoto(id), 'remove the background please');
    expect(out.mime).toBe('image/png');
    const { data, info } = await sharp(out.data).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(4);
    const mask = await garmentMask(id);
    const dist = edgeDistance(mask);
    let far = 0;
    let clear = 0;
    let solid = 0;
    let inside = 0;
    for (let i = 0; i < mask.mask.length; i++) {
      if (dist[i]! <= 8) continue;
      if (mask.mask[i]) {
        inside++;
        if (data[i * 4 + 3]! === 255) solid++;
      } else {
        far++;
        if (data[i * 4 + 3]! === 0) clear++;
      }
    }
    expect(clear / far).toBeGreaterThanOrEqual(0.99);
    expect(solid / inside).toBeGreaterThanOrEqual(0.99);
  });

  it(
    'brightens the photo and crops it square around the garment',
    { timeout: 120_000 },
    async () => {
      const id = '03032_00';
      const input = await garmentPhoto(id);
      const out = await editPhoto(input, 'crop to square, then make it brighter');
      const meta = await sharp(out.data).metadata();
      expect(meta.width).toBe(768);
      expect(meta.height).toBe(768);
      // The garment (dark) is brighter than in the photo.
      const mean = async (b: Buffer) =>
        (await sharp(b).stats()).channels.slice(0, 3).reduce((s, c) => s + c.mean, 0) / 3;
      const crop = await sharp(input)
        .extract({ left: 0, top: (1024 - 768) / 2, width: 768, height: 768 })
        .toBuffer();
      expect(await mean(out.data)).toBeGreaterThan((await mean(crop)) + 5);
    },
  );

  it('refuses what it cannot do, naming the part it cannot do', async () => {
    await expect(editPhoto(await garmentPhoto('00055_00'), 'add a hat')).rejects.toThrow(
      /cannot do "add a hat"/,
    );
    await expect(
      editPhoto(await garmentPhoto('00055_00'), 'make the background white and add a hat'),
    ).rejects.toThrow(/cannot do "add a hat"/);
  });
});

describe.skipIf(!present)('photo_edit through the service', () => {
  let srv: TestServer;
  let api: Api;
  let photoUrl: string;
  beforeAll(async () => {
    srv = await startTestServer({}, 'photo-edit-');
    api = srv.api((await createAccount(srv.dataDir, 20)).apiKey);
    photoUrl = await api.uploadUrl(await garmentPhoto('00055_00'), 'image/jpeg');
  });
  afterAll(async () => {
    await srv?.close();
  });
  /** Sends a photo_edit of the photo with this instruction and waits for the job's end. */
  async function edit(customPrompt: string) {
    const res = await api.generate({
      toolId: 'photo_edit',
      images: { user_photo: photoUrl },
      customPrompt,
    });
    expectSuccess(res, 202);
    const id = res.body.id as string;
    return { id, job: await api.waitForJob(id, 90_000) };
  }
  it(
    '"add a hat" fails with a readable reason and the charge is refunded: the balance is unchanged',
    { timeout: 120_000 },
    async () => {
      const before = await api.balance();
      const { id, job } = await edit('add a hat');
      expect(job.status).toBe('failed');
      expect(job.errorMessage).toMatch(
        /cannot do "add a hat".*It can: change the background colour/,
      );
      expect(await ledgerOfJob(srv, id)).toEqual([
        { kind: 'charge', amount: -3 },
        { kind: 'refund', amount: 3 },
      ]);
      expect(await api.balance()).toBe(before);
    },
  );

  it(
    '"make the background light grey" completes, is charged once, and its result has the grey backdrop',
    { timeout: 120_000 },
    async () => {
      const before = await api.balance();
      const { id, job } = await edit('make the background light grey');
      expect(job.status).toBe('completed');
      expect(await api.balance()).toBe(before - 3);
      const file = await download((job.resultUrls as string[])[0]!, api.key);
      expect(file.status).toBe(200);
      const m = await measure('00055_00', file.bytes, [LIGHT_GREY, LIGHT_GREY, LIGHT_GREY]);
      expect(m.backdrop).toBeGreaterThanOrEqual(0.99);
      expect(m.garmentChange).toBeLessThanOrEqual(4);
    },
  );
});
