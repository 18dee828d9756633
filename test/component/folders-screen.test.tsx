// @vitest-environment jsdom
import fs from 'node:fs';
import path from 'node:path';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { FoldersScreen } from '../../src/renderer/src/screens/FoldersScreen';
import { BatchBoard } from '../../src/renderer/src/screens/BatchBoard';
import { Notice } from '../../src/renderer/src/components/Notice';
import { useFolders } from '../../src/renderer/src/stores/folders-store';
import { studio } from '../../src/renderer/src/transport';
import { useStudioHarness } from './studio-harness';

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

describe('BatchBoard', () => {
  it('has an empty state that says where items come from', () => {
    render(<BatchBoard />);
    expect(screen.getByText('Nothing in the queue')).toBeTruthy();
    expect(screen.getByText(/dropped into a hot folder/)).toBeTruthy();
  });
});
