// @vitest-environment jsdom
import { fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { LooksScreen } from '../../src/renderer/src/screens/LooksScreen';
import { useUi } from '../../src/renderer/src/stores/ui-store';
import { useStudioHarness } from './studio-harness';

useStudioHarness();

describe('LooksScreen', () => {
  it('shows each ready shoot as a card and starts a folder from it', async () => {
    render(<LooksScreen />);
    expect(screen.getByText('No looks yet')).toBeTruthy();
    const shoots = await screen.findByRole('list', { name: 'Ready shoots' });
    const card = (await within(shoots).findAllByRole('listitem'))[0]!;
    const title = card.querySelector('strong')?.textContent ?? '';
    expect(title).not.toBe('');
    expect(card.querySelector('.muted')?.textContent).toMatch(/ · \d+ shots: \S/);
    expect(card.querySelector('img')?.getAttribute('src')).toBeTruthy();

    fireEvent.click(within(card).getByRole('button', { name: 'Start a folder' }));
    const draft = useUi.getState().draftRecipe;
    expect(draft?.request).toMatchObject({
      readyTemplateSetId: expect.stringMatching(/\S/),
      images: { garment_photo: expect.any(String) },
    });
    expect(useUi.getState().screen).toBe('folders');
  });
});
