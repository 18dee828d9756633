/** What counts as an AI provider in the environment, and the daily cap's refusals in words. */
import { describe, expect, it } from 'vitest';
import {
  aiProviderInEnvironment,
  DAILY_CAP_SENTENCE,
  parseDailyCap,
} from '../../src/shared/studio-settings';

describe('aiProviderInEnvironment', () => {
  it.each([
    [{}, false],
    [{ DROPSHOOT_FAL_KEY: 'k' }, true],
    [{ DROPSHOOT_OPENAI_KEY: 'k' }, true],
    [{ DROPSHOOT_FAL_KEY: '  ' }, false],
    [{ DROPSHOOT_ROUTE_VIRTUAL_MODEL: 'fal' }, true],
    [{ DROPSHOOT_ROUTE_PHOTO_EDIT: 'openai:gpt-image-1' }, true],
    [{ DROPSHOOT_ROUTE_PHOTO_EDIT: 'local' }, false],
    [{ DROPSHOOT_ROUTE_PHOTO_EDIT: '' }, false],
    [{ DROPSHOOT_FAL_BASE_URL: 'https://queue.fal.run' }, false],
    [{ FAL_KEY: 'k', OPENAI_API_KEY: 'k' }, false],
  ])('%j -> %s', (env, expected) => {
    expect(aiProviderInEnvironment(env)).toBe(expected);
  });
});

describe('parseDailyCap', () => {
  it.each([
    ['500', 500],
    [' 40 ', 40],
    ['100000000', 100_000_000],
  ])('%j is %d', (text, value) => {
    expect(parseDailyCap(text)).toEqual({ ok: true, value });
  });
  it.each(['0', '-3', '2.5', '1e3', 'twelve', '', '100000001'])(
    '%j is refused with the sentence',
    (text) => {
      expect(parseDailyCap(text)).toEqual({ ok: false, message: DAILY_CAP_SENTENCE });
    },
  );
});
