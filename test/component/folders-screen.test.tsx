// @vitest-environment jsdom
import fs from 'node:fs';
import path from 'node:path';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { Notice } from '../../src/renderer/src/components/Notice';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { studio } from '../../src/renderer/src/transport';
import { useStudioHarness } from './studio-harness';
import { watchedFolder } from './watched-folder';

const harness = useStudioHarness();

describe('FoldersScreen', () => {
  it('says what to do when there is no folder, then adds one the engine watches', async () => {
    await useFolders.getState().load();
    render(
      <>
        <Notice />
        <FoldersScreen />
      </>,
    );
    expect(screen.getByText('No hot folders yet')).toBeTruthy();
    const hot = path.join(harness().root, 'incoming');
    fs.mkdirSync(hot);
    fireEvent.click(screen.getByRole('button', { name: 'Add folder' }));
    fireEvent.change(screen.getByLabelText('Folder to watch'), { target: { value: hot } });
    await screen.findByText('Recipe is valid.');
    fireEvent.click(screen.getByRole('button', { name: 'Start watching' }));
    const list = await screen.findByRole('list', { name: 'Watched folders' });
    await waitFor(() => expect(within(list).getByText(hot)).toBeTruthy());
    expect(within(list).getByText('Virtual model', { exact: false })).toBeTruthy();
    expect(within(list).getByText(`→ ${hot}-export`)).toBeTruthy();
    // The engine itself has it.
    await expect(studio().call('folders.list', {})).resolves.toHaveLength(1);
  });

  it('shows the engine refusing a folder in plain words, and keeps the form', async () => {
    render(
      <>
        <Notice />
        <FoldersScreen />
      </>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Add folder' }));
    fireEvent.change(screen.getByLabelText('Folder to watch'), {
      target: { value: path.join(harness().root, 'does-not-exist', 'x') },
    });
    await screen.findByText('Recipe is valid.');
    fireEvent.click(screen.getByRole('button', { name: 'Start watching' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/does-not-exist/);
    expect(screen.getByLabelText('Folder to watch')).toBeTruthy();
  });
});

describe('a hot folder that goes away', () => {
  it('is shown as not found while it is away, and no longer once it is back', async () => {
    const hot = await watchedFolder(harness().root, 'share');
    await useFolders.getState().load();
    render(<FoldersScreen />);
    const card = () => screen.getByRole('listitem', { name: 'Folder share' });
    await waitFor(() => expect(card()).toBeTruthy());
    expect(within(card()).queryByTestId('folder-missing')).toBeNull();
    // The studio's event stream carries the change (studio-hot-folder-comes-back); here the
    // store is loaded again, as the app does on that event.
    fs.renameSync(hot, `${hot}-away`);
    await act(() => useFolders.getState().load());
    // Before: nothing said.
    expect(within(card()).getByTestId('folder-missing').textContent).toMatch(/Folder not found/);
    fs.renameSync(`${hot}-away`, hot);
    await act(() => useFolders.getState().load());
    expect(within(card()).queryByTestId('folder-missing')).toBeNull();
  });
});

describe('BatchBoard', () => {
  it('has an empty state that says where items come from', () => {
    render(<BatchBoard />);
    expect(screen.getByText('Nothing in the queue')).toBeTruthy();
    expect(screen.getByText(/dropped into a hot folder/)).toBeTruthy();
  });
});
