/**
 * Creates refused 402 by a plan in billing_issue (spec 2.9 lists the plan states) while the balance
 * covers every photo were told as "short of diamonds … about 15 diamond(s) missing. Add diamonds
 * and run again": advice that cannot help (review rev27 O1). The run reads the plan's status and
 * says it is the plan. Against the reference /v1 service (written from the spec alone,
 * `planStatus`), through `run`'s own path.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chargedTo, referenceWorld, runOnWorld } from './helpers/reference-studio';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const EMAIL = 'plan-gate@ref.test';

describe('creates refused 402 by a plan not active, the balance ample', () => {
  it('the run says the plan is the cause, never to add diamonds; nothing charged', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 1000,
      service: { seed: 17, timeScale: 0.01, jobSeconds: [20, 20], planStatus: 'billing_issue' },
      photos: 2,
    });
    const summary = await runOnWorld(w, { signal: AbortSignal.timeout(30_000) });
    expect(summary.exported).toBe(0);
    expect(chargedTo(w.service, EMAIL)).toBe(0);
    const notices = (summary.notices ?? []).join('\n');
    // Before: 'short of diamonds: … about N diamond(s) missing). Add diamonds and run again'.
    expect(notices).not.toMatch(/Add diamonds/);
    expect(notices).toMatch(/plan is billing_issue, and adding diamonds will not help/);
    expect(summary.diamondsMissing).toBeUndefined();
    // Each held photo says so too. Before: 'not started: short of diamonds: <the 402's words>'.
    expect(summary.held).toHaveLength(2);
    for (const h of summary.held) {
      expect(h.reason).toMatch(
        /^not started: refused 402 \(.+\) while the balance covers it: the account's plan is billing_issue$/,
      );
      expect(h.reason).not.toMatch(/short of diamonds/);
    }
  }, 60_000);

  it('a plan active with too few diamonds: still short of diamonds', async () => {
    const w = await referenceWorld(cleanups, {
      email: EMAIL,
      diamonds: 0,
      service: { seed: 17, timeScale: 0.01, jobSeconds: [20, 20] },
      photos: 1,
    });
    const summary = await runOnWorld(w, { signal: AbortSignal.timeout(30_000) });
    expect(summary.exported).toBe(0);
    expect((summary.notices ?? []).join('\n')).not.toMatch(/adding diamonds will not help/);
    expect(summary.held.map((h) => h.reason)).toEqual([
      expect.stringMatching(/^not started: short of diamonds: /),
    ]);
  }, 60_000);
});
