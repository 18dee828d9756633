import { describe, expect, it } from 'vitest';
import {
  NamingPatternError,
  parsePattern,
  previewNames,
  renderName,
  validatePattern,
  type NamingValues,
} from '../../src/studio/export/naming';
import { CheckedExportSettingsSchema } from '../../src/studio/export/presets';

const sample: NamingValues = {
  name: 'look-042.jpg',
  folder: '',
  tool: 'model-swap',
  shot: 'front',
  n: 1,
  date: '2026-11-22',
  ext: 'jpg',
};

describe('naming patterns', () => {
  it('renders every token and appends the output extension', () => {
    expect(renderName('{name}-{tool}-{shot}-{n}-{date}', sample)).toBe(
      'look-042-model-swap-front-1-2026-11-22.jpg',
    );
    expect(renderName('{name}-{tool}-{n}', { ...sample, n: 3, ext: 'webp' })).toBe(
      'look-042-model-swap-3.webp',
    );
  });

  it('does not double a trailing .{ext}', () => {
    expect(renderName('{name}.{ext}', sample)).toBe('look-042.jpg');
  });

  it('mirrors the source subfolder with {folder} and collapses it at top level', () => {
    expect(renderName('{folder}/{name}-{n}', { ...sample, folder: 'brand/ss27' })).toBe(
      'brand/ss27/look-042-1.jpg',
    );
    expect(renderName('{folder}/{name}-{n}', { ...sample, folder: 'brand\\ss27' })).toBe(
      'brand/ss27/look-042-1.jpg',
    );
    expect(renderName('{folder}/{name}-{n}', sample)).toBe('look-042-1.jpg');
  });

  it('formats a Date as the local YYYY-MM-DD', () => {
    expect(renderName('{name}-{date}', { ...sample, date: new Date(2026, 0, 5, 23, 59) })).toBe(
      'look-042-2026-01-05.jpg',
    );
  });

  it('rejects unknown tokens with a message naming the valid ones', () => {
    expect(() => parsePattern('{name}-{colour}')).toThrow(NamingPatternError);
    expect(validatePattern('{name}-{colour}')).toEqual({
      ok: false,
      error: expect.stringContaining('Unknown token {colour}') as string,
    });
    expect(validatePattern('{name}-{colour}')).toMatchObject({
      error: expect.stringContaining('{name}, {folder}, {tool}') as string,
    });
  });

  it.each([
    ['', 'empty'],
    ['{name', 'Unbalanced'],
    ['name}', 'Unbalanced'],
    ['{name}:{n}', 'not allowed'],
    ['{name}?{n}', 'not allowed'],
    ['{name}\\{n}', 'use / for folders'],
    ['../{name}', '".." folders'],
    ['out/../../{name}', '".." folders'],
    ['/abs/{name}', 'relative'],
    ['photo', 'needs at least one'],
    ['{date}.{ext}', 'needs at least one'],
  ])('rejects the bad pattern %j', (pattern, message) => {
    const result = validatePattern(pattern);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toContain(message);
  });

  it('sanitises token values so none can escape the folder or be illegal', () => {
    const hostile = {
      ...sample,
      name: '../../etc/pa:ss?wd*.jpg',
      tool: 'a/b\\c',
      shot: '<con>',
      folder: '../../../x/./..',
    };
    const name = renderName('{folder}/{name}-{tool}-{shot}', hostile);
    // The source name is reduced to its base name; separators in other values become _.
    expect(name).toBe('x/pa_ss_wd_-a_b_c-_con_.jpg');
    expect(name.split('/')).not.toContain('..');
    expect(name).not.toMatch(/[<>:"\\|?*]/);
  });

  it('never produces hidden files or Windows device names', () => {
    expect(renderName('{name}', { ...sample, name: '.hidden.jpg' })).toBe('hidden.jpg');
    expect(renderName('{name}', { ...sample, name: 'CON.jpg' })).toBe('CON_.jpg');
    expect(renderName('{tool} ', { ...sample, tool: 'trailing...' })).toBe('trailing.jpg');
  });

  it('previews names for the UI, or the error', () => {
    expect(previewNames('{name}-{n}', [sample, { ...sample, n: 2 }])).toEqual({
      ok: true,
      names: ['look-042-1.jpg', 'look-042-2.jpg'],
    });
    expect(previewNames('{nme}', [sample])).toMatchObject({ ok: false });
  });

  it('validates the pattern in the export settings schema, with defaults', () => {
    expect(CheckedExportSettingsSchema.parse({})).toEqual({
      preset: 'original',
      format: 'jpeg',
      quality: 90,
      naming: '{name}-{tool}-{n}',
    });
    expect(CheckedExportSettingsSchema.safeParse({ naming: '{bogus}' }).success).toBe(false);
    expect(CheckedExportSettingsSchema.safeParse({ quality: 0 }).success).toBe(false);
    expect(CheckedExportSettingsSchema.safeParse({ quality: 101 }).success).toBe(false);
  });
});
