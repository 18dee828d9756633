/** Progress and time left of a set of items (a batch, a folder), from what the board already has. */
import {
  ACTIVE_STATES,
  type AccountView,
  type ItemState,
  type ItemView,
  type WaitReason,
} from '../../shared/studio';

/** Why photos the engine still holds are not moving, in the operator's words. */
export type Hold =
  | 'ceiling'
  | 'no_diamonds'
  | 'plan'
  | 'uncertain'
  | 'daily_cap'
  | 'offline'
  | 'paused'
  | 'jobs_hidden'
  | 'hidden_paid';

export type Progress = {
  total: number;
  /** Finished: exported, or declined in review. Nothing more to do. */
  done: number;
  /** Made, waiting for the operator's review. */
  toReview: number;
  failed: number;
  /** Still with the engine (queued to exporting), held ones included. */
  working: number;
  /** Of those, the ones that wait for something time alone does not bring, by what holds them. */
  held: Partial<Record<Hold, number>>;
  /** Of those, the ones not held: what the ETA is for. */
  moving: number;
  /** Photos still to be finished (not done): the progress bar's remainder. */
  remaining: number;
  /** Time until the engine has made the photos it is not holding; null: no pace yet. */
  etaSeconds: number | null;
};

const FINISHED = ['exported', 'rejected'] as const;
const HOLDS: readonly WaitReason[] = [
  'ceiling',
  'no_diamonds',
  'uncertain',
  'daily_cap',
  'offline',
  'paused',
  'jobs_hidden',
];

/**
 * The state the operator is shown: a bad file (not a photo, cut short) is a failure to act on,
 * not "rejected" like a result declined in review (review uirev B7).
 */
export const boardState = (item: ItemView): ItemState => (item.badFile ? 'failed' : item.state);

/** Items the engine is done with, for now: finished, or waiting for the operator. */
export const isSettled = (item: ItemView) => !ACTIVE_STATES.includes(item.state);

/** The engine's words for a photo the account's plan holds (scheduler.ts). */
export const PLAN_HOLDS = /the account's plan is (\w+)/;

/**
 * The engine's words for a paid job whose polls the service refuses (hidden-jobs.ts: the account's
 * gate, or one job's refusal backing off): its wait reason is only `service_error`.
 */
const HIDDEN_PAID = /the service refuse[sd] to show (?:the )?paid jobs?/;

/** A paid photo whose result the service will not show yet: collected once the account is settled. */
export const hiddenPaid = (item: ItemView): boolean =>
  item.waitReason === 'service_error' && item.jobId !== null && HIDDEN_PAID.test(item.error ?? '');

/** What holds a photo the engine still has, or null when it is moving. */
export function holdOf(item: ItemView): Hold | null {
  if (!ACTIVE_STATES.includes(item.state)) return null;
  // An uncertain submission waits for the operator whatever else it waits for.
  if (item.uncertain) return 'uncertain';
  if (hiddenPaid(item)) return 'hidden_paid';
  // Refused 402 while the balance covers it: the account's plan holds it, not a short balance.
  if (item.waitReason === 'no_diamonds' && PLAN_HOLDS.test(item.error ?? '')) return 'plan';
  return item.waitReason && HOLDS.includes(item.waitReason) ? (item.waitReason as Hold) : null;
}

/**
 * ETA from the pace seen so far: photos the engine made in the last 15 minutes over the time they
 * took, for the photos it is not holding. No pace yet (nothing made) means no ETA rather than an
 * invented one.
 */
export function progressOf(items: ItemView[], now = Date.now()): Progress {
  const counted = items.filter((i) => i.state !== 'skipped' && i.state !== 'cancelled');
  const done = counted.filter((i) =>
    (FINISHED as readonly string[]).includes(boardState(i)),
  ).length;
  const working = counted.filter((i) => ACTIVE_STATES.includes(i.state));
  const held: Partial<Record<Hold, number>> = {};
  for (const item of working) {
    const hold = holdOf(item);
    if (hold) held[hold] = (held[hold] ?? 0) + 1;
  }
  const moving = working.filter((i) => holdOf(i) === null).length;
  const since = now - 15 * 60_000;
  const recent = counted.filter(
    (i) =>
      isSettled(i) &&
      i.state !== 'rejected' &&
      i.state !== 'failed' &&
      Date.parse(i.updatedAt) >= since,
  );
  let etaSeconds: number | null = null;
  if (moving === 0) etaSeconds = 0;
  else if (recent.length >= 1) {
    const start = Math.min(
      ...counted.map((i) => Date.parse(i.createdAt)).filter((t) => t >= since),
      ...recent.map((i) => Date.parse(i.updatedAt)),
    );
    const elapsed = Math.max(5_000, now - start);
    etaSeconds = Math.round((moving * elapsed) / recent.length / 1000);
  }
  return {
    total: counted.length,
    done,
    toReview: counted.filter((i) => i.state === 'review').length,
    failed: counted.filter((i) => boardState(i) === 'failed').length,
    working: working.length,
    held,
    moving,
    remaining: counted.length - done,
    etaSeconds,
  };
}

/** Every photo still to go waits for the daily request cap: nothing moves before 00:00 UTC. */
export const heldByDailyCap = (items: ItemView[]) => {
  const open = items.filter((i) => !isSettled(i));
  return open.length > 0 && open.every((i) => i.waitReason === 'daily_cap');
};

/**
 * Where diamonds are added, as far as the studio knows it: the account behind its key (the spec
 * gives no top-up address; keys are made in the service's web dashboard), or the embedded one.
 */
export function topUpWhere(
  account: Pick<AccountView, 'mode' | 'email' | 'serviceUrl'> | null,
): string {
  if (!account) return 'add diamonds to the account of the studio’s API key (named under Account)';
  if (account.mode === 'embedded')
    return `grant diamonds to the embedded account ${account.email} (dropshoot admin grant)`;
  return `add diamonds to the account ${account.email}${account.serviceUrl ? ` at ${account.serviceUrl}` : ''}, the account of the studio’s API key`;
}

const HOLD_WORDS: Record<Hold, string> = {
  ceiling: 'at the diamond ceiling (raise it to go on)',
  // Said with where (heldText): "top up" said neither which account nor where.
  no_diamonds: 'short of diamonds',
  plan: 'refused by the account’s plan, not for diamonds (settle the plan with the service)',
  uncertain: 'uncertain (check the service, then resubmit or fail)',
  daily_cap: 'at the daily request cap (after 00:00 UTC)',
  offline: 'waiting for the service to answer',
  paused: 'paused',
  jobs_hidden: 'not started: the service refuses to show paid jobs (settle the account with it)',
  hidden_paid:
    'paid for, the service refuses to show them (settle the account with it; they are collected then, not paid again)',
};

/**
 * What holds photos, e.g. "2 held: at the diamond ceiling (raise it to go on)"; short of diamonds,
 * with where to add them (`topUpWhere`).
 */
export function heldText(held: Progress['held'], topUp = topUpWhere(null)): string {
  return (Object.entries(held) as [Hold, number][])
    .map(
      ([hold, n]) =>
        `${n} held: ${HOLD_WORDS[hold]}${hold === 'no_diamonds' ? ` (${topUp} to go on)` : ''}`,
    )
    .join(' · ');
}

/** What the operator has left to do once the engine is through: review, failed photos. */
function operatorText(progress: Progress): string {
  const parts = [
    progress.toReview ? `${progress.toReview} to review` : '',
    progress.failed ? `${progress.failed} failed` : '',
  ].filter(Boolean);
  return parts.length ? `made; ${parts.join(', ')}` : 'done';
}

/**
 * Time left: "done" only when every photo is finished. Photos held (ceiling, diamonds, an
 * uncertain submission…) are said as such, never folded into a time they will not keep.
 */
export function etaText(
  progress: Progress,
  paused: boolean,
  capHeld = false,
  topUp?: string,
): string {
  if (progress.working === 0) return operatorText(progress);
  if (paused) return 'paused';
  if (capHeld) return 'after 00:00 UTC (daily cap)';
  const held = heldText(progress.held, topUp);
  if (progress.moving === 0) return held;
  const time =
    progress.etaSeconds === null
      ? 'estimating…'
      : progress.etaSeconds < 60
        ? 'under a minute'
        : `about ${Math.ceil(progress.etaSeconds / 60)} min`;
  return held ? `${time} · ${held}` : time;
}
