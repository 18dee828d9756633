/** A seeded random schedule: what to shoot, how the service behaves, and what goes wrong in each run. */
import type { ReferenceServiceOptions } from '../reference-service';
import type { Faults } from '../reference-service/fault-proxy';
import { SeededRandom } from '../reference-service/random';

export const RECIPES = {
  remove_background: {
    request: { toolId: 'remove_background', images: { user_photo: '{photo}' } },
    export: { preset: 'original', format: 'png', naming: '{name}-{n}' },
  },
  virtual_model: {
    request: {
      toolId: 'virtual_model',
      images: { garment_photo: '{photo}', fashion_model: 'person-004', venue: 'place-002' },
      pose: 'stance-003',
      ratio: '4:5',
    },
    export: { preset: 'original', format: 'jpeg', quality: 85, naming: '{name}-{n}' },
  },
  clothing_ecom_pack: {
    request: { toolId: 'clothing_ecom_pack', images: { user_photo: '{photo}' } },
    export: { preset: 'original', format: 'jpeg', naming: '{name}-{n}' },
  },
  ready_shoot: {
    request: { readyTemplateSetId: 'shoot-03', images: { garment_photo: '{photo}' } },
    export: { preset: 'original', format: 'jpeg', naming: '{name}-{shot}' },
  },
} as const;
export type RecipeName = keyof typeof RECIPES;

export type RunPlan = {
  /** Proxy faults during this run. */
  faults: Faults;
  /** kill -9 of the run process this long after it started. */
  killAtMs: number | null;
  /** Restart of the service process during the run. */
  serviceRestart: { atMs: number; downMs: number; signal: 'SIGKILL' | 'SIGTERM' } | null;
  /** A regular file where the output subfolder `sub/` must go, for this run only. */
  blockExport: boolean;
};

export type Schedule = {
  seed: number;
  recipe: RecipeName;
  photos: number;
  service: ReferenceServiceOptions;
  /** Service faults switched on during the disrupted runs (off for the clean runs). */
  serviceFaults: Pick<
    ReferenceServiceOptions,
    'failJobs' | 'failShots' | 'fail500AfterCharge' | 'rateLimit'
  >;
  disrupted: RunPlan[];
  /** Clean runs allowed after the disrupted ones, until one exits 0. */
  cleanRuns: number;
  /** One more clean run after a run exited 0 (must spend and write nothing). */
  rerunAfterSuccess: boolean;
};

// No 'insufficient402': a made-up 402 names a price and a balance the service does not have,
// which misleads any client that learns prices from 402s (a short balance is tested for real).
const FAULT_MENU: (keyof Faults)[] = [
  'error500Before',
  'error500After',
  'dropAfter',
  'resetBefore',
  'stallMs',
  'rateLimit429',
];

export function makeSchedule(seed: number): Schedule {
  const rng = new SeededRandom(seed * 7919 + 17);
  const recipe = rng.pick(Object.keys(RECIPES) as RecipeName[]);
  const disruptedCount = 1 + rng.int(3);
  const disrupted: RunPlan[] = Array.from({ length: disruptedCount }, () => {
    const faults: Faults = {};
    if (rng.chance(0.7))
      for (const name of FAULT_MENU)
        if (rng.chance(0.3)) faults[name] = Number(rng.between(0.02, 0.12).toFixed(3));
    return {
      faults,
      killAtMs: rng.chance(0.5) ? Math.round(rng.between(2000, 7000)) : null,
      serviceRestart: rng.chance(0.35)
        ? {
            atMs: Math.round(rng.between(1500, 6000)),
            downMs: Math.round(rng.between(200, 2500)),
            signal: rng.chance(0.6) ? 'SIGKILL' : 'SIGTERM',
          }
        : null,
      blockExport: rng.chance(0.25),
    };
  });
  return {
    seed,
    recipe,
    photos: 3 + rng.int(5),
    service: {
      seed,
      // Jobs of 0.25 to 2 s: long enough for kills and restarts to land while work is under way.
      timeScale: 0.05,
      idStyle: rng.chance(0.5) ? 'uuid' : 'opaque',
      extraFields: rng.chance(0.5),
      chargeExtra: rng.chance(0.3) ? 1 : 0,
      catalogStatus: rng.chance(0.5) ? 'pack' : 'spec',
      resultsOnOtherHost: rng.chance(0.5),
      createDelayMs: rng.chance(0.3) ? Math.round(rng.between(100, 800)) : 0,
    },
    serviceFaults: {
      failJobs: rng.chance(0.3) ? 0.15 : 0,
      failShots: rng.chance(0.3) ? 0.25 : 0,
      fail500AfterCharge: rng.chance(0.3) ? 0.15 : 0,
      ...(rng.chance(0.2) ? { rateLimit: { probability: 0.05, retryAfterSeconds: 1 } } : {}),
    },
    disrupted,
    cleanRuns: 3,
    rerunAfterSuccess: rng.chance(0.3),
  };
}
