import { describe, expect, it } from 'vitest';
import { colourIn, parseInstruction } from '../../src/core/providers/local/edit-instruction';

describe('photo_edit instruction parsing', () => {
  it('reads background colours: named with a shade, hex, and removal', () => {
    expect(parseInstruction('make the background light grey')).toEqual({
      edits: [{ kind: 'background', colour: [211, 211, 211] }],
      unsupported: [],
    });
    expect(parseInstruction('Background #EEE please').edits).toEqual([
      { kind: 'background', colour: [238, 238, 238] },
    ]);
    expect(parseInstruction('replace the backdrop with pure white').edits).toEqual([
      { kind: 'background', colour: [255, 255, 255] },
    ]);
    expect(parseInstruction('remove the grey background').edits).toEqual([
      { kind: 'remove-background' },
    ]);
    expect(parseInstruction('transparent background').edits).toEqual([
      { kind: 'remove-background' },
    ]);
    expect(parseInstruction('brighten the background').edits).toEqual([
      { kind: 'background-brightness', factor: 1.15 },
    ]);
  });

  it('reads brightness with its strength, crops, tone, and a garment recolour', () => {
    expect(parseInstruction('a bit brighter').edits).toEqual([
      { kind: 'brightness', factor: 1.075 },
    ]);
    expect(parseInstruction('much darker').edits[0]).toMatchObject({ kind: 'brightness' });
    expect((parseInstruction('much darker').edits[0] as { factor: number }).factor).toBeCloseTo(
      1 / 1.4,
    );
    expect(parseInstruction('crop to 4:5').edits).toEqual([{ kind: 'crop', ratio: 0.8 }]);
    expect(parseInstruction('square crop').edits).toEqual([{ kind: 'crop', ratio: 1 }]);
    expect(parseInstruction('crop tighter').edits).toEqual([{ kind: 'crop', ratio: null }]);
    expect(parseInstruction('black and white').edits).toEqual([{ kind: 'monochrome' }]);
    expect(parseInstruction('make the shirt navy blue').edits).toEqual([
      { kind: 'recolour', colour: [31, 45, 77] },
    ]);
  });

  it('splits clauses and reports every clause it cannot perform', () => {
    const parsed = parseInstruction(
      'make the background white, add a hat and remove the logo. Thanks!',
    );
    expect(parsed.edits).toEqual([{ kind: 'background', colour: [255, 255, 255] }]);
    expect(parsed.unsupported).toEqual(['add a hat', 'remove the logo']);
    expect(parseInstruction('add a soft shadow').unsupported).toEqual(['add a soft shadow']);
    expect(parseInstruction('Färbe das Hemd blau').unsupported).toHaveLength(1);
    expect(parseInstruction('please 🙏').edits).toEqual([]);
  });

  it('shades named colours toward white or black', () => {
    expect(colourIn('light blue')).toEqual([173, 216, 230]);
    expect(colourIn('pale red')![0]).toBeGreaterThan(192);
    expect(colourIn('dark green')![1]).toBeLessThan(143);
    expect(colourIn('rgb(10, 20, 300)')).toEqual([10, 20, 255]);
    expect(colourIn('no colour here')).toBeNull();
  });
});
