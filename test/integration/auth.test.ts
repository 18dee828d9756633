/**
 * Authentication (spec 5): Bearer keys, 401 on every endpoint for missing/malformed/invalid/revoked
 * keys, up to 5 active keys sharing one balance, and per-account scoping of jobs and template sets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, type Api, type Json } from './helpers/api';
import { startTestServer, type TestServer } from './helpers/server';
import { createAccount, createKey, grant, revokeKey, runCli, type Account } from './helpers/cli';
import { garmentPng } from './helpers/images';
import { catalogIds } from './helpers/tools';

let srv: TestServer;
let alice: Account;
let bob: Account;
let aliceApi: Api;
let bobApi: Api;

beforeAll(async () => {
  srv = await startTestServer({}, 'auth-');
  [alice, bob] = await Promise.all([
    createAccount(srv.dataDir, 100),
    createAccount(srv.dataDir, 100),
  ]);
  aliceApi = srv.api(alice.apiKey);
  bobApi = srv.api(bob.apiKey);
});
afterAll(async () => {
  await srv?.close();
});

type Call = { name: string; run: (api: Api) => Promise<import('./helpers/api').ApiResponse> };

/** One call per endpoint of spec section 4. Bodies are valid-looking so only auth can fail them. */
function everyEndpoint(png: Buffer): Call[] {
  const validGen = {
    toolId: 'remove_background',
    images: { user_photo: 'https://example.com/a.png' },
  };
  return [
    { name: 'GET /v1/models', run: (a) => a.get('/v1/models') },
    { name: 'GET /v1/fashion-models', run: (a) => a.get('/v1/fashion-models') },
    { name: 'GET /v1/venues', run: (a) => a.get('/v1/venues') },
    { name: 'GET /v1/poses', run: (a) => a.get('/v1/poses') },
    { name: 'POST /v1/uploads', run: (a) => a.upload(png, 'image/png') },
    { name: 'POST /v1/generations', run: (a) => a.generate(validGen) },
    { name: 'GET /v1/generations/{id}', run: (a) => a.get('/v1/generations/gen_whatever') },
    {
      name: 'POST /v1/template-sets',
      run: (a) => a.post('/v1/template-sets', { label: 'x', sourceMediaId: 'gen_whatever' }),
    },
    { name: 'GET /v1/template-sets', run: (a) => a.get('/v1/template-sets') },
    {
      name: 'DELETE /v1/template-sets/{id}',
      run: (a) => a.delete('/v1/template-sets/ts_whatever'),
    },
    { name: 'GET /v1/account', run: (a) => a.get('/v1/account') },
    { name: 'GET /v1/ready-template-sets', run: (a) => a.get('/v1/ready-template-sets') },
    {
      name: 'GET /v1/ready-template-sets/{id}',
      run: (a) => a.get('/v1/ready-template-sets/rts_whatever'),
    },
    {
      name: 'POST /v1/catalog-jobs',
      run: (a) =>
        a.post('/v1/catalog-jobs', {
          readyTemplateSetId: 'x',
          images: { garment_photo: 'https://example.com/a.png' },
        }),
    },
  ];
}

describe('401 for bad credentials on every endpoint', () => {
  const badHeaders: [string, string | null][] = [
    ['no Authorization header', null],
    ['Basic scheme', 'Basic x'],
    ['Basic scheme carrying the real key', 'BASIC_WITH_KEY'],
    ['Bearer with nothing', 'Bearer'],
    ['Bearer with a blank', 'Bearer '],
    ['unknown key', 'Bearer ds_live_thisisnotarealkeythisisnotarealkey'],
    ['real key with an extra character', 'KEY_PLUS_X'],
  ];

  for (const [label, header] of badHeaders) {
    it(`answers 401 JSON for ${label}`, async () => {
      const png = await garmentPng();
      const auth =
        header === 'BASIC_WITH_KEY'
          ? `Basic ${alice.apiKey}`
          : header === 'KEY_PLUS_X'
            ? `Bearer ${alice.apiKey}x`
            : header;
      for (const call of everyEndpoint(png)) {
        const res = await call.run(aliceApi.withKey(null).withAuth(auth));
        try {
          expectError(res, 401);
        } catch (err) {
          throw new Error(`${call.name} with ${label}: ${(err as Error).message}`);
        }
      }
    });
  }

  it('checks the key before validating the body (unknown toolId without a key is 401, not 400)', async () => {
    expectError(await aliceApi.withKey(null).generate({ toolId: 'no_such_tool' }), 401);
    expectError(
      await aliceApi
        .withKey(null)
        .post('/v1/generations', undefined, { raw: '{not json', contentType: 'application/json' }),
      401,
    );
  });

  it('charges nothing when a request is rejected with 401', async () => {
    const before = await aliceApi.balance();
    const res = await aliceApi.withKey(null).generate({
      toolId: 'remove_background',
      images: { user_photo: 'https://example.com/a.png' },
    });
    expectError(res, 401);
    expect(await aliceApi.balance()).toBe(before);
  });
});

describe('revoked keys', () => {
  it('gives 401 on every endpoint after revoke-key while the other keys of the account keep working', async () => {
    const acct = await createAccount(srv.dataDir, 10);
    const second = await createKey(srv.dataDir, acct.email);
    const api = srv.api(second.apiKey);
    expectSuccess(await api.get('/v1/account'), 200);
    expect(await revokeKey(srv.dataDir, second.keyId)).toEqual({ revoked: true });
    const png = await garmentPng();
    for (const call of everyEndpoint(png)) {
      const res = await call.run(api);
      try {
        expectError(res, 401);
      } catch (err) {
        throw new Error(`${call.name} with a revoked key: ${(err as Error).message}`);
      }
    }
    expectSuccess(await srv.api(acct.apiKey).get('/v1/account'), 200);
  });
});

describe('keys of one account', () => {
  it('allows 5 active keys; a 6th is refused until one is revoked', async () => {
    const acct = await createAccount(srv.dataDir, 0);
    const extra = [];
    for (let i = 0; i < 4; i++) extra.push(await createKey(srv.dataDir, acct.email));
    expect(new Set([acct.apiKey, ...extra.map((k) => k.apiKey)]).size).toBe(5);
    for (const k of extra) expectSuccess(await srv.api(k.apiKey).get('/v1/account'), 200);

    const sixth = await runCli([
      'admin',
      'create-key',
      '--data',
      srv.dataDir,
      '--email',
      acct.email,
    ]);
    expect(sixth.code).not.toBe(0);
    expect(sixth.stderr.trim().length).toBeGreaterThan(0);
    expect(sixth.stderr).toMatch(/5|five|limit|active/i);
    expect(sixth.stdout.trim()).toBe('');

    await revokeKey(srv.dataDir, extra[0]!.keyId);
    const replacement = await createKey(srv.dataDir, acct.email);
    expectSuccess(await srv.api(replacement.apiKey).get('/v1/account'), 200);
  });

  it('shares one diamond balance across all keys of the account', async () => {
    const acct = await createAccount(srv.dataDir, 10);
    const k2 = await createKey(srv.dataDir, acct.email);
    const a1 = srv.api(acct.apiKey);
    const a2 = srv.api(k2.apiKey);
    expect(await a2.balance()).toBe(10);
    const url = await a1.uploadUrl(await garmentPng());
    const id = await a2.submit({ toolId: 'remove_background', images: { user_photo: url } });
    expect(await a1.balance()).toBe(9);
    // A job created with one key can be polled with another key of the same account.
    const job = await a1.waitForJob(id);
    expect(job.status).toBe('completed');
    await grant(srv.dataDir, acct.email, 5);
    expect(await a2.balance()).toBe(14);
    const me1 = await a1.get('/v1/account');
    const me2 = await a2.get('/v1/account');
    expect(me1.body.email).toBe(acct.email);
    expect(me2.body.email).toBe(acct.email);
  });
});

describe('resources are scoped to the account', () => {
  let aliceJob: string;
  let aliceSet: string;

  beforeAll(async () => {
    const ids = await catalogIds(aliceApi);
    const url = await aliceApi.uploadUrl(await garmentPng());
    aliceJob = await aliceApi.submit({
      toolId: 'virtual_model',
      images: { fashion_model: ids.fashionModel, garment_photo: url },
    });
    const done = await aliceApi.waitForJob(aliceJob);
    expect(done.status).toBe('completed');
    const created = await aliceApi.post('/v1/template-sets', {
      label: 'alice look',
      sourceMediaId: aliceJob,
    });
    expectSuccess(created, 201);
    aliceSet = created.body.id as string;
  });

  it("gives 404 when polling another account's job", async () => {
    expectSuccess(await aliceApi.get(`/v1/generations/${aliceJob}`), 200);
    expectError(await bobApi.get(`/v1/generations/${aliceJob}`), 404);
  });

  it("hides another account's template sets from the listing and answers 404 to deleting them", async () => {
    const list = await bobApi.get('/v1/template-sets');
    expectSuccess(list, 200);
    expect((list.body.templateSets as Json[]).map((t) => t.id)).not.toContain(aliceSet);
    expectError(await bobApi.delete(`/v1/template-sets/${aliceSet}`), 404);
    const still = await aliceApi.get('/v1/template-sets');
    expect((still.body.templateSets as Json[]).map((t) => t.id)).toContain(aliceSet);
  });

  it("gives 404 when saving another account's job as a template set (sourceMediaId)", async () => {
    expectError(
      await bobApi.post('/v1/template-sets', { label: 'stolen', sourceMediaId: aliceJob }),
      404,
    );
  });

  it("refuses to generate from another account's templateSetId with 404 and charges nothing", async () => {
    const before = await bobApi.balance();
    const url = await bobApi.uploadUrl(await garmentPng());
    const res = await bobApi.generate({ templateSetId: aliceSet, images: { garment_photo: url } });
    expectError(res, 404);
    expect(await bobApi.balance()).toBe(before);
  });
});
