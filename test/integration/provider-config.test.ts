/** Provider routing configuration: file, keychain keys, environment, and errors that hold no key. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProviderConfig } from '../../src/core/providers/remote/config';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function dataDir(providers?: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dropshoot-providers-'));
  dirs.push(dir);
  if (providers !== undefined) fs.writeFileSync(path.join(dir, 'providers.json'), providers);
  return dir;
}

describe('provider configuration', () => {
  it('routes nothing without a file or variables', () => {
    expect(loadProviderConfig(dataDir(), {})).toEqual({ routes: {} });
  });

  it('takes routes from the file, keys from the keychain, and lets DROPSHOOT_* variables win', () => {
    const dir = dataDir(
      JSON.stringify({
        fal: { pollIntervalMs: 500 },
        routes: { virtual_model: { adapter: 'fal', costPerOutputUsd: 0.07 } },
      }),
    );
    const fromKeychain = loadProviderConfig(dir, {}, { fal: 'fal-keychain-key-123' });
    expect(fromKeychain.fal).toEqual({
      apiKey: 'fal-keychain-key-123',
      baseUrl: 'https://queue.fal.run',
      pollIntervalMs: 500,
    });
    expect(fromKeychain.routes.virtual_model).toEqual({ adapter: 'fal', costPerOutputUsd: 0.07 });

    const env = {
      DROPSHOOT_FAL_KEY: 'fal-env-key-456789',
      DROPSHOOT_ROUTE_PHOTO_EDIT: 'openai:gpt-image-1',
      DROPSHOOT_OPENAI_KEY: 'sk-env-123456789',
      DROPSHOOT_OPENAI_BASE_URL: 'http://127.0.0.1:9999',
    };
    const withEnv = loadProviderConfig(dir, env, { fal: 'fal-keychain-key-123' });
    expect(withEnv.fal?.apiKey).toBe('fal-env-key-456789');
    expect(withEnv.routes.photo_edit).toEqual({ adapter: 'openai', model: 'gpt-image-1' });
    expect(withEnv.openai).toEqual({
      apiKey: 'sk-env-123456789',
      baseUrl: 'http://127.0.0.1:9999',
      model: 'gpt-image-1',
    });
  });

  it('explains a route without a key, an unknown tool and bad JSON, without quoting any key', () => {
    expect(() =>
      loadProviderConfig(
        dataDir(JSON.stringify({ routes: { ai_videos: { adapter: 'fal' } } })),
        {},
      ),
    ).toThrow('route ai_videos uses fal, but no fal apiKey is configured');
    expect(() =>
      loadProviderConfig(
        dataDir(JSON.stringify({ routes: { make_magic: { adapter: 'fal' } } })),
        {},
      ),
    ).toThrow(/routes/);
    const secret = 'sk-very-secret-value-000';
    const broken = dataDir(`{"openai": {"apiKey": "${secret}",}}`);
    let message = '';
    try {
      loadProviderConfig(broken, {});
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/is not valid JSON/);
    expect(message).not.toContain(secret);
    const badValue = dataDir(JSON.stringify({ openai: { apiKey: secret, baseUrl: 'not a url' } }));
    expect(() => loadProviderConfig(badValue, {})).toThrow(/openai.baseUrl/);
    try {
      loadProviderConfig(badValue, {});
    } catch (error) {
      expect((error as Error).message).not.toContain(secret);
    }
    expect(() => loadProviderConfig(dataDir('[1, 2]'), {})).toThrow(/one JSON object/);
  });
});
