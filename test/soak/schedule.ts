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

/**
 * A daily-cap schedule: a low cap per key, and clocks (service and `run`) that start just before
 * 00:00 UTC, so the first day ends during or right after the first run. A run after one that
 * stopped at the cap is the next day's (the clocks are moved on to it, the service restarted).
 */
export type DayPlan = {
  /** The clocks start this long before 00:00 UTC. */
  startBeforeMidnightMs: number;
  /** The key's daily cap at the service. */
  serviceCap: number;
  /** Requests already counted at the service on the first day (other work earlier that day). */
  usedBefore: number;
  /** `--daily-cap` given to run (null: none; the studio's default of 500 leaves the service's cap to bind). */
  studioCap: number | null;
  /** `--wait` on every run: the closed day is waited out, past 00:00 UTC, instead of ending the run. */
  wait: boolean;
};

export type Schedule = {
  seed: number;
  /** Set on every fourth seed: a low daily cap across a UTC day change. */
  day: DayPlan | null;
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

/** Drawn from its own stream, so the other seeds' schedules are those of earlier sessions. */
function makeDayPlan(seed: number, photos: number): DayPlan {
  const rng = new SeededRandom(seed * 104_729 + 5);
  const startBeforeMidnightMs = Math.round(rng.between(4000, 20_000));
  if (rng.chance(0.35)) {
    // The second day carries every photo (a photo takes 3-5 requests, more under faults); the
    // first has only a few requests left, so the run waits for 00:00 UTC and goes on.
    const serviceCap = photos * 8 + 24;
    return {
      startBeforeMidnightMs,
      serviceCap,
      usedBefore: serviceCap - 4 - rng.int(8),
      studioCap: rng.chance(0.5) ? serviceCap : null,
      wait: true,
    };
  }
  const serviceCap = 8 + rng.int(photos * 3);
  const studioCap = rng.chance(0.5) ? 8 + rng.int(serviceCap - 7) : null;
  return {
    startBeforeMidnightMs,
    serviceCap,
    usedBefore: rng.chance(0.5) ? Math.max(0, serviceCap - 3 - rng.int(6)) : 0,
    studioCap,
    wait: false,
  };
}

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
  const photos = 3 + rng.int(5);
  return {
    seed,
    day: null,
    recipe,
    photos,
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

export function scheduleFor(seed: number): Schedule {
  const schedule = makeSchedule(seed);
  if (seed % 4 !== 0) return schedule;
  const day = makeDayPlan(seed, schedule.photos);
  // A few days may be needed at a low cap: each clean run after a capped one is the next day's.
  return { ...schedule, day, cleanRuns: day.wait ? 3 : 6 };
}
