/**
 * What must hold after a schedule, judged from the service's own ledger and jobs and from the
 * output folder, never from the studio's database:
 * 1. each photo is charged once per recipe, plus only charges the service itself refunded;
 * 2. every charged, non-refunded job is delivered (its results exported) or its photo is listed
 *    as failed (or uncertain, or held) in the last run's summary with a reason;
 * 3. no output file is written twice (same content under two names, or a file rewritten/removed);
 * 4. the last run's exit code and summary are true; every run that printed a summary lists each
 *    paid photo it did not deliver, and its exit code says whether all were delivered;
 * 5. daily-cap schedules: the service never counts more of the studio's requests in a UTC day than
 *    `--daily-cap`, a refusal at the service's cap is not asked again and again, and a paid job
 *    listed for the next run is collected by a later run without a new charge.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { LedgerEntry, ReferenceJob } from '../reference-service';
import type { FaultLogEntry } from '../reference-service/fault-proxy';
import { identifyPhoto, type Photo } from './photos';
import type { CliOutcome } from './processes';
import type { DayPlan, RunPlan } from './schedule';

const Named = z.object({ name: z.string(), reason: z.string() });
export const SummarySchema = z.looseObject({
  photos: z.number(),
  exported: z.number(),
  skipped: z.number(),
  failed: z.array(Named),
  uncertain: z.array(Named),
  held: z.array(Named).optional(),
  diamondsSpent: z.number(),
  diamondsUnconfirmed: z.number().optional(),
  diamondsOnUncollectedJobs: z.number().optional(),
  files: z.array(z.string()),
  collectTomorrow: z.array(z.object({ name: z.string(), jobId: z.string() })).optional(),
  unreachable: z.string().optional(),
  notices: z.array(z.string()).optional(),
});
export type Summary = z.infer<typeof SummarySchema>;
export type RunRecord = {
  index: number;
  clean: boolean;
  plan: RunPlan;
  blocked: boolean;
  outcome: CliOutcome;
  summary: Summary | null;
  /** Net diamonds spent according to the service's ledger when the run had ended. */
  ledgerSpentAfter: number;
  /** Jobs still processing at the service when the run had ended. */
  openJobsAfter: number;
  /** When it ended, on the schedule's clock (the service's). */
  endedAtMs: number;
};
export type FolderSnapshot = Map<string, { sha: string; mtimeMs: number; size: number }>;

/**
 * A hidden `.tmp` file is an export being written, not an export: a run killed mid-write leaves
 * one, and the next write into the folder sweeps it (CI at 099723e: seed 7's kill landed there).
 */
const WRITE_IN_PROGRESS = /^\..+\.tmp$/;

export async function snapshotFolder(root: string): Promise<FolderSnapshot> {
  const snapshot: FolderSnapshot = new Map();
  const walk = async (rel: string) => {
    for (const entry of await fs.promises.readdir(path.join(root, rel), { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(relPath);
      else if (entry.isFile() && !WRITE_IN_PROGRESS.test(entry.name)) {
        const full = path.join(root, relPath);
        const [bytes, stat] = await Promise.all([
          fs.promises.readFile(full),
          fs.promises.stat(full),
        ]);
        snapshot.set(relPath, {
          sha: createHash('sha256').update(bytes).digest('hex'),
          mtimeMs: stat.mtimeMs,
          size: bytes.length,
        });
      }
    }
  };
  await walk('');
  return snapshot;
}

const productUrl = (request: unknown): string | null => {
  const images = (request as { images?: Record<string, unknown> } | null)?.images ?? {};
  for (const field of ['user_photo', 'garment_photo'])
    if (typeof images[field] === 'string') return images[field] as string;
  return null;
};

/** Output files of a photo: same folder, named `<stem>-...` (the recipes' naming). */
const filesOf = (snapshot: FolderSnapshot, photo: Photo) =>
  [...snapshot.keys()].filter(
    (rel) =>
      path.posix.dirname(rel) === (photo.dir || '.') &&
      path.posix.basename(rel).startsWith(`${photo.stem}-`),
  );

/**
 * Requests a run may have refused at the service's daily cap: the first refusal closes the day,
 * but requests already on their way (up to the studio's 3 slots and its due polls) meet it too.
 */
const REFUSALS_PER_RUN = 6;

export async function checkInvariants(input: {
  photos: Photo[];
  runs: RunRecord[];
  snapshots: FolderSnapshot[];
  ledger: LedgerEntry[];
  jobs: ReferenceJob[];
  proxyLog: FaultLogEntry[];
  outDir: string;
  serviceUrl: string;
  day?: DayPlan | null;
  /** The service's count of the studio's key per UTC day (refused: by its daily cap). */
  requestsByDay?: Record<string, { n: number; refused: number }>;
}): Promise<string[]> {
  const violations: string[] = [];
  const { photos, runs, snapshots, jobs } = input;
  const final = snapshots.at(-1) ?? new Map();
  const lastRun = runs.at(-1);

  // Which photo each job was for, by the content of the image the service received.
  const jobsByPhoto = new Map<number, ReferenceJob[]>(photos.map((p) => [p.index, []]));
  for (const job of jobs) {
    const url = productUrl(job.request);
    let photo: Photo | null = null;
    if (url) {
      const res = await fetch(url).catch(() => null);
      if (res?.ok) photo = await identifyPhoto(Buffer.from(await res.arrayBuffer()), photos);
    }
    if (!photo) {
      violations.push(
        `job ${job.id} (charged ${job.charged}) is for no known photo (image ${url ?? 'missing'})`,
      );
      continue;
    }
    jobsByPhoto.get(photo.index)!.push(job);
  }

  // The ledger and the jobs agree (a check on the reference service itself).
  for (const job of jobs) {
    const entries = input.ledger.filter((e) => e.jobId === job.id);
    const charged = -entries.filter((e) => e.kind === 'charge').reduce((s, e) => s + e.delta, 0);
    const refunded = entries.filter((e) => e.kind === 'refund').reduce((s, e) => s + e.delta, 0);
    if (charged !== job.charged || refunded !== job.refunded)
      violations.push(`service ledger disagrees with job ${job.id}`);
  }

  const creates = input.proxyLog.filter(
    (e) => e.method === 'POST' && /^\/v1\/(generations|catalog-jobs)$/.test(e.path),
  );
  const lostCreates = creates.filter(
    (e) => e.forwarded && (e.fault === 'dropAfter' || e.upstreamStatus === null),
  ).length;
  const summary = lastRun?.summary ?? null;
  const listed = new Map<string, string>();
  for (const entry of [
    ...(summary?.failed ?? []),
    ...(summary?.uncertain ?? []),
    ...(summary?.held ?? []),
  ])
    listed.set(entry.name.replace(/\.[^.]+$/, ''), entry.reason);

  const delivered = new Set<number>();
  for (const photo of photos) {
    const photoJobs = jobsByPhoto.get(photo.index)!;
    const paid = photoJobs.filter((j) => j.refunded === 0);
    const files = filesOf(final, photo);
    // 1. charged once per recipe, plus refunded charges
    if (paid.length > 1) {
      violations.push(
        `${photo.rel}: charged ${paid.length} times without refund (jobs ${paid.map((j) => `${j.id} ${j.status} ${j.charged}d`).join(', ')})${lostCreates ? `; ${lostCreates} create answer(s) were lost by the proxy` : ''}`,
      );
    }
    // 2. delivered, or listed with a reason
    const expected = paid.length ? Math.max(...paid.map((j) => j.results)) : 0;
    const isDelivered =
      paid.length > 0 &&
      paid.every((j) => j.status === 'completed') &&
      expected > 0 &&
      files.length >= expected;
    if (isDelivered) delivered.add(photo.index);
    const reason = listed.get(photo.rel.replace(/\.[^.]+$/, ''));
    if (paid.length && !isDelivered && reason === undefined) {
      violations.push(
        `${photo.rel}: paid job ${paid.map((j) => `${j.id} (${j.status}, ${j.results} results)`).join(', ')} not delivered (${files.length} file(s) exported) and not listed as failed in the last run's summary`,
      );
    }
    if (!paid.length && files.length === 0 && reason === undefined && summary)
      violations.push(
        `${photo.rel}: neither exported nor listed as failed in the last run's summary`,
      );
    if (reason !== undefined && reason.trim() === '')
      violations.push(`${photo.rel}: listed as failed without a reason`);
    if (paid.length && files.length > expected)
      violations.push(
        `${photo.rel}: ${files.length} files exported for ${expected} result(s): ${files.join(', ')}`,
      );
  }

  // 4 (every run). A run that printed a summary lists every paid photo it did not deliver, and
  // its exit code says whether everything was delivered.
  const stem = (rel: string) => rel.replace(/\.[^.]+$/, '');
  for (const [k, run] of runs.entries()) {
    if (!run.summary || run.outcome.killed || run.outcome.timedOut || run === lastRun) continue;
    const names = new Set(
      [...run.summary.failed, ...run.summary.uncertain, ...(run.summary.held ?? [])].map((e) =>
        stem(e.name),
      ),
    );
    for (const photo of photos) {
      const paid = jobsByPhoto
        .get(photo.index)!
        .filter((j) => j.refunded === 0 && Date.parse(j.createdAt) <= run.endedAtMs);
      if (!paid.length || names.has(stem(photo.rel))) continue;
      const files = filesOf(snapshots[k] ?? new Map(), photo).length;
      if (files < Math.max(...paid.map((j) => j.results)))
        violations.push(
          `run ${run.index}: ${photo.rel} paid (job ${paid.map((j) => j.id).join(', ')}) but neither delivered (${files} file(s)) nor listed in its summary`,
        );
    }
    const allDone = run.summary.exported + run.summary.skipped === run.summary.photos;
    if ((run.outcome.code === 0) !== allDone)
      violations.push(
        `run ${run.index}: exit code ${run.outcome.code} but exported ${run.summary.exported} + skipped ${run.summary.skipped} of ${run.summary.photos}`,
      );
  }

  // 5. daily caps
  if (input.day) {
    const day = input.day;
    const firstDay = Object.keys(input.requestsByDay ?? {}).sort()[0];
    for (const [date, count] of Object.entries(input.requestsByDay ?? {})) {
      const studio = count.n - (date === firstDay ? day.usedBefore : 0);
      if (day.studioCap !== null && studio > day.studioCap)
        violations.push(
          `${date}: the service counted ${studio} of the studio's requests; --daily-cap is ${day.studioCap}`,
        );
      const runsThatDay = runs.filter(
        (r) => new Date(r.endedAtMs).toISOString().slice(0, 10) === date,
      ).length;
      if (count.refused > REFUSALS_PER_RUN * Math.max(1, runsThatDay))
        violations.push(
          `${date}: the service refused ${count.refused} requests at its daily cap of ${day.serviceCap} over ${runsThatDay} run(s) (asked again after a refusal)`,
        );
    }
    for (const run of runs) {
      for (const listedJob of run.summary?.collectTomorrow ?? []) {
        const job = jobs.find((j) => j.id === listedJob.jobId);
        if (!job) {
          violations.push(
            `run ${run.index} lists job ${listedJob.jobId} (${listedJob.name}) for the next run; the service has no such job`,
          );
          continue;
        }
        if (job.refunded > 0) continue;
        const photo = photos.find((p) => stem(p.rel) === stem(listedJob.name));
        const later = photo
          ? jobsByPhoto
              .get(photo.index)!
              .filter((j) => j.id !== job.id && Date.parse(j.createdAt) > run.endedAtMs)
          : [];
        if (later.length)
          violations.push(
            `${listedJob.name}: paid job ${job.id} listed by run ${run.index} for the next run, but charged again later (${later.map((j) => j.id).join(', ')})`,
          );
      }
    }
  }

  // 3. nothing written twice
  const bySha = new Map<string, string[]>();
  for (const [rel, file] of final) bySha.set(file.sha, [...(bySha.get(file.sha) ?? []), rel]);
  for (const names of bySha.values())
    if (names.length > 1)
      violations.push(`same content written under ${names.length} names: ${names.join(', ')}`);
  for (let k = 1; k < snapshots.length; k++) {
    for (const [rel, before] of snapshots[k - 1]!) {
      const after = snapshots[k]!.get(rel);
      if (!after) violations.push(`${rel} exported by run ${k} disappeared after run ${k + 1}`);
      else if (after.sha !== before.sha || after.mtimeMs !== before.mtimeMs)
        violations.push(`${rel} exported by run ${k} was rewritten by run ${k + 1}`);
    }
  }

  // 4. the last run tells the truth
  if (!lastRun) return [...violations, 'no run happened'];
  if (lastRun.outcome.timedOut)
    violations.push(`run ${lastRun.index} did not end within its time limit (waits silently)`);
  for (const run of runs)
    if (run.outcome.timedOut && run !== lastRun)
      violations.push(`run ${run.index} did not end within its time limit (waits silently)`);
  if (!summary) {
    violations.push(
      `the last run (${lastRun.index}) printed no summary (exit ${lastRun.outcome.code ?? lastRun.outcome.signal}): ${lastRun.outcome.stderr.trim().slice(-300)}`,
    );
    return violations;
  }
  const parsed = SummarySchema.safeParse(summary);
  if (!parsed.success)
    return [
      ...violations,
      `the last run's summary does not have the documented shape: ${parsed.error.issues[0]?.message}`,
    ];
  if (summary.photos !== photos.length)
    violations.push(`summary says ${summary.photos} photos, the folder has ${photos.length}`);
  const allDone = summary.exported + summary.skipped === summary.photos;
  if ((lastRun.outcome.code === 0) !== allDone)
    violations.push(
      `exit code ${lastRun.outcome.code} but exported ${summary.exported} + skipped ${summary.skipped} of ${summary.photos}`,
    );
  if (summary.exported + summary.skipped !== delivered.size) {
    violations.push(
      `summary says ${summary.exported} exported + ${summary.skipped} skipped, but ${delivered.size} photo(s) are delivered in the folder and paid once`,
    );
  }
  for (const photo of photos) {
    if (delivered.has(photo.index) && listed.has(photo.rel.replace(/\.[^.]+$/, '')))
      violations.push(
        `${photo.rel} is delivered but listed as failed: ${listed.get(photo.rel.replace(/\.[^.]+$/, ''))}`,
      );
  }
  for (const file of summary.files)
    if (!fs.existsSync(file)) violations.push(`summary lists ${file}, which does not exist`);
  // Diamonds: a run's spend is checkable when nothing from an earlier run could still be charged or refunded.
  for (const [k, run] of runs.entries()) {
    const before = runs[k - 1];
    if (!run.summary || (before && (!before.summary || before.openJobsAfter > 0))) continue;
    const ledgerSpent = run.ledgerSpentAfter - (before?.ledgerSpentAfter ?? 0);
    const spent = run.summary.diamondsSpent;
    // Charges on jobs the run left uncollected may have been refunded without its seeing it: the
    // ledger may be lower by at most what it names on them, never higher (a confirmed spend).
    const uncollected = run.summary.diamondsOnUncollectedJobs ?? 0;
    // A spend the run says it could not confirm from the balance (list prices) may be below the
    // ledger, by any amount; above it only by what it names on uncollected jobs.
    const fits = run.summary.diamondsUnconfirmed
      ? ledgerSpent >= spent - uncollected
      : ledgerSpent >= spent - uncollected && ledgerSpent <= spent;
    if (!fits)
      violations.push(
        `run ${run.index} says ${spent} diamonds spent (${run.summary.diamondsUnconfirmed ?? 0} unconfirmed, ${uncollected} on uncollected jobs); the service's ledger says ${ledgerSpent} in that run`,
      );
  }
  return violations;
}
