import { describe, expect, it } from 'vitest';
import { garmentNamedIn } from '../../src/core/providers/local/garment-kind';

describe('garmentNamedIn: the garment a model_to_flat_lay request names', () => {
  it.each([
    ['flat lay of the jeans', 'bottom', 'jeans'],
    ['only the trousers, neatly folded', 'bottom', 'trousers'],
    ['lay out the skirt', 'bottom', 'skirt'],
    ['the shorts on linen', 'bottom', 'shorts'],
    ['the dress, full length', 'dress', 'dress'],
    ['her jumpsuit', 'dress', 'jumpsuit'],
    ['the dress shirt', 'top', 'shirt'],
    ['a short-sleeved blouse', 'top', 'blouse'],
    ['the crop top', 'top', 'crop top'],
    ['top view of the skirt', 'bottom', 'skirt'],
  ])('"%s" names a %s (%s)', (text, kind, word) => {
    expect(garmentNamedIn(text)).toEqual({ kind, word });
  });

  it('names none when the request speaks of no garment, or of "top" as a place', () => {
    expect(garmentNamedIn('')).toBeNull();
    expect(garmentNamedIn('laid on top of a wooden table, seen from the top')).toBeNull();
    expect(garmentNamedIn('soft light, top-down')).toBeNull();
    expect(garmentNamedIn('she is dressed casually')).toBeNull();
  });

  it('lists every word when two kinds are named, so the renderer does not guess', () => {
    expect(garmentNamedIn('the shirt and the jeans side by side')).toEqual({
      several: ['shirt', 'jeans'],
    });
    expect(garmentNamedIn('not the top, the skirt')).toEqual({ several: ['top', 'skirt'] });
  });
});
