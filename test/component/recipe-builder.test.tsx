// @vitest-environment jsdom
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useState } from 'react';
import type { RecipeInput } from '../../src/shared/studio';
import { DEFAULT_RECIPE, RecipeBuilder } from '../../src/renderer/src/components/RecipeBuilder';
import { useStudioHarness } from './studio-harness';

useStudioHarness();

let latest: RecipeInput = DEFAULT_RECIPE;
function Builder() {
  const [recipe, setRecipe] = useState<RecipeInput>(DEFAULT_RECIPE);
  latest = recipe;
  return <RecipeBuilder value={recipe} onChange={setRecipe} />;
}

describe('RecipeBuilder', () => {
  it('shows the service catalog with a gender filter and picks a model by keyboard', async () => {
    render(<Builder />);
    const models = await screen.findByRole('listbox', { name: 'Fashion model' });
    await waitFor(() => expect(models.querySelectorAll('[role=option]').length).toBe(24));
    fireEvent.change(screen.getByLabelText('Gender'), { target: { value: 'male' } });
    const men = models.querySelectorAll('[role=option]');
    expect(men.length).toBeGreaterThan(0);
    expect(men.length).toBeLessThan(24);
    fireEvent.keyDown(models, { key: 'ArrowRight' });
    expect((latest.request as { images: Record<string, string> }).images.fashion_model).not.toBe(
      'fm_amara',
    );
  });

  it('validates as you type with the service rules, and prices the tool', async () => {
    render(<Builder />);
    expect(await screen.findByText('Recipe is valid.')).toBeTruthy();
    expect(screen.getByText('Price: 4 diamonds per photo')).toBeTruthy();
    // Tools said as words, prices in the singular where one (review uirev C5: "remove background · 1 diamonds").
    const tools = [...(screen.getByLabelText('Tool') as HTMLSelectElement).options].map(
      (o) => o.text,
    );
    expect(tools).toContain('Remove background · 1 diamond');
    expect(tools).toContain('Clothing ecom pack · 12 diamonds');

    fireEvent.change(screen.getByLabelText('Tool'), { target: { value: 'jewelry_on_model' } });
    expect(screen.getByText('Price: 5 diamonds per photo')).toBeTruthy();
    expect(screen.getByText('Recipe is valid.')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Background'), { target: { value: 'teal' } });
    expect(screen.getByText(/Not ready: .*backgroundColor.*hex colour/)).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Background'), { target: { value: '#0a8080' } });
    expect(screen.getByText('Recipe is valid.')).toBeTruthy();
  });

  it('previews export file names from the engine, and explains a bad pattern', async () => {
    render(<Builder />);
    const names = screen.getByLabelText('File names');
    fireEvent.change(names, { target: { value: '{folder}/{name}_{n}' } });
    await waitFor(() =>
      expect(document.querySelector('#naming-preview code')?.textContent).toBe(
        'spring/look-042_1.jpg',
      ),
    );
    fireEvent.change(names, { target: { value: '{name}-{colour}' } });
    await waitFor(() =>
      expect(document.querySelector('#naming-preview .problem')?.textContent).toMatch(/colour/),
    );
  });

  it('replays a ready shoot: the price follows the shots chosen', async () => {
    render(<Builder />);
    await screen.findByRole('listbox', { name: 'Fashion model' });
    fireEvent.change(screen.getByLabelText('Recipe kind'), { target: { value: 'ready_shoot' } });
    const shots = await screen.findAllByRole('checkbox');
    expect(screen.getByText(`Price: ${4 * shots.length} diamonds per photo`)).toBeTruthy();
    fireEvent.click(shots[0]!);
    expect(screen.getByText(`Price: ${4 * (shots.length - 1)} diamonds per photo`)).toBeTruthy();
    expect((latest.request as { shotIds?: string[] }).shotIds).toHaveLength(shots.length - 1);
  });

  it('names export presets by their labels and stores the chosen id', async () => {
    render(<Builder />);
    const preset = screen.getByLabelText<HTMLSelectElement>('Preset');
    expect([...preset.options].map((o) => o.textContent)).toEqual([
      'Original size',
      'Amazon main image (white, 2000 px, ≥85% fill)',
      'Zalando (1801×2600, 1:1.44)',
      'Shopify (2048×2048 square)',
    ]);
    const amazon = screen.getByRole<HTMLOptionElement>('option', { name: /^Amazon main image/ });
    fireEvent.change(preset, { target: { value: amazon.value } });
    await waitFor(() => expect(latest.export?.preset).toBe('amazon'));
  });
});
