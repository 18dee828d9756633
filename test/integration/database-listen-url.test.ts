/**
 * `--database-listen-url` / DROPSHOOT_DATABASE_LISTEN_URL are read like `--database`: an empty
 * flag is refused at once, naming the flag (it was taken as a URL and failed only when serve
 * began listening), an empty variable counts as unset, a URL is validated and trimmed.
 */
import { describe, expect, it } from 'vitest';
import {
  DATABASE_LISTEN_URL_VARIABLE,
  DatabaseUrlInvalid,
  databaseListenUrlFrom,
} from '../../src/core/store/open-store';

describe('databaseListenUrlFrom', () => {
  it('refuses an empty flag at once, naming it', () => {
    for (const empty of ['', '  ']) {
      expect(() => databaseListenUrlFrom(empty, {})).toThrow(DatabaseUrlInvalid);
      expect(() => databaseListenUrlFrom(empty, {})).toThrow(/--database-listen-url is empty/);
    }
  });

  it('takes the flag, else a non-empty variable, validated and trimmed', () => {
    const url = 'postgres://app:secret-pw@db.internal:5432/app';
    const env = { [DATABASE_LISTEN_URL_VARIABLE]: 'postgresql://other@db2/other' };
    expect(databaseListenUrlFrom(` ${url} `, env)).toBe(url);
    expect(databaseListenUrlFrom(undefined, env)).toBe('postgresql://other@db2/other');
    expect(
      databaseListenUrlFrom(undefined, { [DATABASE_LISTEN_URL_VARIABLE]: ' ' }),
    ).toBeUndefined();
    expect(databaseListenUrlFrom(undefined, {})).toBeUndefined();
    const bad = (() => {
      try {
        databaseListenUrlFrom('mysql://root:hunter2-pw@db/app', {});
      } catch (err) {
        return err as Error;
      }
    })();
    expect(bad).toBeInstanceOf(DatabaseUrlInvalid);
    expect(bad!.message).toMatch(/--database-listen-url/);
    expect(bad!.message).not.toMatch(/hunter2-pw/);
  });
});
