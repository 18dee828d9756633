// @vitest-environment jsdom
/**
 * Export again of an exported photo whose result is no longer in the studio library (a disk
 * clean-up, a library moved): the earlier exported file was removed before the new one was
 * written, the write then failed (a raw ENOENT), and only a paid Redo got the photo back (review
 * rev29 D2). Now the photo and its exported file stay as they are, and the item says why in
 * words. Against the reference /v1 service, a real studio on loopback and the renderer's HTTP
 * transport.
 */
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '@testing-library/react';
import { expect, it } from 'vitest';
import { studio } from '../../src/renderer/src/transport';
import { pausedWithPhotos, useStudioAgainstReference } from './studio-against-reference';

const fixture = useStudioAgainstReference();
const EMAIL = 'export-again-missing@ref.test';

/** The one photo queued, approved and exported by a fresh studio; its item and exported file. */
async function exportedPhoto(tmpName: string) {
  const { root, service, dataDir, apiKey } = await fixture.referenceAccount({
    tmpName,
    seed: 31,
    account: { email: EMAIL, diamonds: 100 },
  });
  const client = fixture.serviceClient(service, apiKey);
  await fixture.serveStudio({ dataDir, client, apiKey });
  await pausedWithPhotos(root);
  await studio().call('queue.pause', { paused: false });
  const item = async () => (await studio().call('queue.list', {})).items[0]!;
  await waitFor(async () => expect((await item()).state).toBe('review'), { timeout: 30_000 });
  const { results } = await studio().call('results.list', {});
  await studio().call('review.set', { ids: results.map((r) => r.id), review: 'approved' });
  await waitFor(async () => expect((await item()).state).toBe('exported'), { timeout: 30_000 });
  const exportedPath = (await studio().call('results.list', {})).results[0]!.exportedPath!;
  return { root, service, dataDir, item, exportedPath, bytes: fs.readFileSync(exportedPath) };
}

/** Every file under `dir`. */
function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)],
    );
}

it('keeps the exported file, and says why, when the result is gone from the library', async () => {
  const { service, dataDir, item, exportedPath, bytes } =
    await exportedPhoto('export-again-missing');
  // The library's copies of the result go; its thumbnails and records stay.
  const library = path.join(dataDir, 'library');
  const removed = filesUnder(library).filter((f) => !/thumb|\.json$|\.db/.test(f));
  expect(removed.length).toBeGreaterThan(0);
  for (const file of removed) fs.rmSync(file);
  const charges = service.ledger(EMAIL).length;

  const { changed } = await studio().call('queue.exportAgain', { ids: [(await item()).id] });
  // Given time to go wrong, were anything under way.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(fs.existsSync(exportedPath) && fs.readFileSync(exportedPath).equals(bytes)).toBe(true);
  const after = await item();
  expect(after.state).toBe('exported');
  expect(`${after.note} ${after.error}`).toMatch(/no longer in the studio library/);
  expect(after.note).toMatch(/exported file was kept/);
  expect(`${after.note} ${after.error}`).not.toMatch(/ENOENT/);
  expect((await studio().call('results.list', {})).results[0]!.exportedPath).toBe(exportedPath);
  expect(service.ledger(EMAIL).length).toBe(charges);
  expect(changed).toBe(0);
});

it('keeps the exported file when the new one cannot be written, and replaces it once it can', async () => {
  const { root, service, item, exportedPath, bytes } =
    await exportedPhoto('export-again-unwritable');
  const out = path.join(root, 'hot-export');
  // New settings place the files under sub/, where a file (not a folder) stands: the write fails.
  const [folder] = await studio().call('folders.list', {});
  const naming = 'sub/{name}-{n}';
  await studio().call('folders.setRecipe', {
    id: folder!.id,
    recipe: { ...folder!.recipe, export: { ...folder!.recipe.export, naming } },
  });
  fs.writeFileSync(path.join(out, 'sub'), 'in the way');
  const charges = service.ledger(EMAIL).length;

  const first = await studio().call('queue.exportAgain', { ids: [(await item()).id] });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(fs.existsSync(exportedPath) && fs.readFileSync(exportedPath).equals(bytes)).toBe(true);
  const kept = await item();
  expect(kept.state).toBe('exported');
  expect(kept.note).toMatch(
    /^not exported again: could not write it again: a file stands where the naming pattern needs a folder \(E.*: the exported file was kept$/,
  );
  expect((await studio().call('results.list', {})).results[0]!.exportedPath).toBe(exportedPath);
  expect(first.changed).toBe(0);
  // Nothing left behind: no new file, no hidden copy.
  expect(fs.readdirSync(out).sort()).toEqual([path.basename(exportedPath), 'sub']);

  // Out of the way, it is written under the new name, and the earlier file goes.
  fs.rmSync(path.join(out, 'sub'));
  const second = await studio().call('queue.exportAgain', { ids: [(await item()).id] });
  expect(second.changed).toBe(1);
  const now = (await studio().call('results.list', {})).results[0]!.exportedPath!;
  expect(now).toBe(path.join(out, 'sub', 'p1-1.jpg'));
  expect(fs.existsSync(now)).toBe(true);
  expect(fs.readdirSync(out)).toEqual(['sub']);
  const done = await item();
  expect([done.state, done.note]).toEqual(['exported', null]);
  expect(service.ledger(EMAIL).length).toBe(charges);
});
