// @vitest-environment jsdom
/**
 * On a remote service the add-folder form kept the embedded catalog's model id ('fm_amara') that
 * the service does not list, and still said "Recipe is valid.": every photo dropped was refused
 * (a request spent each, 45 for a batch). Now the default takes its model from the service's
 * catalog once loaded, and a recipe naming an id the catalog does not list is not ready, in words,
 * so it cannot be saved. Against the reference /v1 service (written from the spec alone), a real
 * studio on loopback and the renderer's HTTP transport.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { expect, it } from 'vitest';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { studio } from '../../src/renderer/src/transport';
import type { CatalogView, FolderView } from '../../src/shared/studio';
import { useStudioAgainstReference, VIRTUAL_MODEL_RECIPE } from './studio-against-reference';

const fixture = useStudioAgainstReference();

async function remoteStudio(tmpName: string) {
  const { root, dataDir, service, apiKey } = await fixture.referenceAccount({
    tmpName,
    seed: 7,
    account: { email: `${tmpName}@ref.test`, diamonds: 100 },
  });
  const client = fixture.serviceClient(service, apiKey);
  await fixture.serveStudio({ dataDir, client, apiKey });
  const catalog = (await studio().call('catalog.get', {})) as CatalogView;
  expect(catalog.fashionModels.some((m) => m.id === 'fm_amara')).toBe(false);
  return { root, catalog };
}

it('starts a new folder with a model the remote service lists, and saves it', async () => {
  const { root, catalog } = await remoteStudio('remote-default');
  render(<FoldersScreen />);
  fireEvent.click(screen.getByRole('button', { name: 'Add folder' }));
  const hot = path.join(root, 'hot');
  fs.mkdirSync(hot);
  fireEvent.change(screen.getByLabelText('Folder to watch'), { target: { value: hot } });
  await screen.findByText('Recipe is valid.');
  const start = screen.getByRole<HTMLButtonElement>('button', { name: 'Start watching' });
  await waitFor(() => expect(start.disabled).toBe(false));
  fireEvent.click(start);
  await waitFor(async () => expect(await studio().call('folders.list', {})).toHaveLength(1));
  const [folder] = (await studio().call('folders.list', {})) as FolderView[];
  const model = (folder!.recipe.request as { images: Record<string, string> }).images.fashion_model;
  expect(catalog.fashionModels.map((m) => m.id)).toContain(model);
});

it('says a recipe whose model the service does not list is not ready, and will not save it', async () => {
  const { root } = await remoteStudio('remote-unlisted');
  const hot = path.join(root, 'hot');
  fs.mkdirSync(hot);
  const stale = {
    ...VIRTUAL_MODEL_RECIPE,
    request: {
      ...VIRTUAL_MODEL_RECIPE.request,
      images: { garment_photo: '{photo}', fashion_model: 'fm_amara' },
    },
  };
  await studio().call('folders.add', { path: hot, outputDir: `${hot}-export`, recipe: stale });
  await useFolders.getState().load();
  render(<FoldersScreen />);
  const card = await screen.findByRole('listitem', { name: 'Folder hot' });
  fireEvent.click(within(card).getByRole('button', { name: 'Edit recipe' }));
  const status = await within(card).findByText(/Not ready: .*fm_amara.*not in this service/);
  expect(status.getAttribute('role')).toBe('status');
  expect(
    within(card).getByRole<HTMLButtonElement>('button', { name: 'Save recipe' }).disabled,
  ).toBe(true);
  expect(within(card).queryByText('Recipe is valid.')).toBeNull();
});
