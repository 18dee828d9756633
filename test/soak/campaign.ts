/**
 * Runs one schedule: a fresh data and output folder, the reference service as a process (with a
 * state file) behind the fault proxy, and `dropshoot run` as a child process, rerun until it
 * exits 0 or the runs allowed are spent. Then the invariants are checked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFaultProxy } from '../reference-service/fault-proxy';
import {
  checkInvariants,
  snapshotFolder,
  type FolderSnapshot,
  type RunRecord,
  type Summary,
} from './invariants';
import { makePhotos } from './photos';
import {
  readJobs,
  readLedger,
  readRequestsByDay,
  runCli,
  startServiceProcess,
  type ServiceProcess,
} from './processes';
import { RECIPES, type RunPlan, type Schedule } from './schedule';

export type SeedResult = {
  seed: number;
  schedule: Schedule;
  runs: RunRecord[];
  violations: string[];
  workDir: string;
  ms: number;
};

const CLEAN: RunPlan = { faults: {}, killAtMs: null, serviceRestart: null, blockExport: false };
const EMAIL = 'soak@reference.test';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DAY_MS = 86_400_000;
/** Time allowed to start the service and set up the account of a daily-cap schedule. */
const SETUP_MARGIN_MS = 10_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function parseSummary(stdout: string): Summary | null {
  for (const line of stdout.split('\n').reverse()) {
    try {
      const value = JSON.parse(line) as Summary;
      if (value && typeof value === 'object' && 'photos' in value) return value;
    } catch {
      // not the summary line
    }
  }
  return null;
}

export async function runSchedule(
  schedule: Schedule,
  opts: { runTimeoutMs?: number; keep?: boolean; log?: (line: string) => void } = {},
): Promise<SeedResult> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), `soak-${schedule.seed}-`));
  const dirs = {
    in: path.join(workDir, 'in'),
    out: path.join(workDir, 'out'),
    data: path.join(workDir, 'data'),
  };
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true });
  const photos = await makePhotos(dirs.in, schedule.photos);
  const recipeFile = path.join(workDir, 'recipe.json');
  fs.writeFileSync(recipeFile, JSON.stringify(RECIPES[schedule.recipe]));
  const statePath = path.join(workDir, 'service-state.json');
  const serviceLog: string[] = [];
  const token = `soak-${schedule.seed}`;
  const serviceOptions = { ...schedule.service, ...schedule.serviceFaults };
  const day = schedule.day;
  // A daily-cap schedule's clocks (service and run) start just before 00:00 UTC: SETUP_MARGIN_MS
  // earlier than the schedule says, so the service's start and the account's setup (seconds on a
  // loaded machine) end before the first day does; run 1 then waits for the schedule's moment.
  const firstMidnight = Math.ceil(Date.now() / DAY_MS) * DAY_MS;
  let clockOffsetMs = day
    ? firstMidnight - day.startBeforeMidnightMs - SETUP_MARGIN_MS - Date.now()
    : 0;
  const clockNow = () => Date.now() + clockOffsetMs;
  let service: ServiceProcess = await startServiceProcess({
    statePath,
    options: serviceOptions,
    token,
    log: serviceLog,
    clockOffsetMs,
  });
  const ports = {
    port: Number(new URL(service.url).port),
    resultsPort: Number(new URL(service.resultsUrl).port),
  };
  const { apiKey } = await service.admin<{ apiKey: string }>('POST', 'accounts', {
    email: EMAIL,
    diamonds: 2000,
    dailyCap: day?.serviceCap ?? 100_000,
  });
  if (day?.usedBefore) await service.admin('POST', 'requests-today', { apiKey, n: day.usedBefore });
  if (day) {
    const early = firstMidnight - day.startBeforeMidnightMs - clockNow();
    // Past the first day's end, the schedule is not the one drawn (the earlier use counted on the
    // wrong day, a --wait run waiting a real day): the harness's failure, not the studio's.
    if (clockNow() >= firstMidnight - 1000)
      throw new Error(
        `setup ended ${((clockNow() - firstMidnight) / 1000).toFixed(1)} s after the first day's 00:00 UTC (margin ${SETUP_MARGIN_MS} ms too short on this machine)`,
      );
    if (early > 0) await sleep(early);
    log(`  (run 1 starts ${((firstMidnight - clockNow()) / 1000).toFixed(1)} s before 00:00 UTC)`);
  }
  // Only faults a service following the spec could show: a 500 in place of a create's real answer
  // would claim a refund that never happened, and 402 exists only on creates.
  const isCreate = (method: string, p: string) =>
    method === 'POST' && /^\/v1\/(generations|catalog-jobs)$/.test(p);
  const proxy = await startFaultProxy({
    target: service.url,
    seed: schedule.seed,
    stallHoldMs: 2500,
    retryAfterSeconds: 1,
    allow: (fault, method, p) =>
      fault === 'error500After'
        ? !isCreate(method, p)
        : fault === 'insufficient402'
          ? isCreate(method, p)
          : true,
  });

  const runs: RunRecord[] = [];
  const snapshots: FolderSnapshot[] = [];
  const plans: { plan: RunPlan; clean: boolean }[] = [
    ...schedule.disrupted.map((plan) => ({ plan, clean: false })),
    ...Array.from({ length: schedule.cleanRuns }, () => ({ plan: CLEAN, clean: true })),
  ];
  let reranAfterSuccess = false;
  try {
    for (let i = 0; i < plans.length; i++) {
      const { plan, clean } = plans[i]!;
      const last = runs.at(-1);
      if (clean && last && last.outcome.code === 0 && !last.outcome.killed) {
        if (!schedule.rerunAfterSuccess || reranAfterSuccess) break;
        reranAfterSuccess = true;
      }
      // The run after one that stopped at the cap is the next day's: the clocks move on to it.
      const capped = last?.summary?.collectTomorrow !== undefined || !!last?.summary?.unreachable;
      if (day && capped && last && utcDay(clockNow()) === utcDay(last.endedAtMs)) {
        clockOffsetMs += (Math.floor(clockNow() / DAY_MS) + 1) * DAY_MS + 2000 - clockNow();
        await service.stop('SIGTERM');
        service = await startServiceProcess({
          statePath,
          options: clean ? schedule.service : serviceOptions,
          token,
          ...ports,
          log: serviceLog,
          clockOffsetMs,
        });
        log(`  (next day: the clocks now read ${new Date(clockNow()).toISOString()})`);
      }
      proxy.setFaults(plan.faults);
      await service.admin(
        'POST',
        'options',
        clean
          ? {
              failJobs: 0,
              failShots: 0,
              fail500AfterCharge: 0,
              rateLimit: { probability: 0, retryAfterSeconds: 1 },
            }
          : schedule.serviceFaults,
      );
      const blockPath = path.join(dirs.out, 'sub');
      let blocked = false;
      if (plan.blockExport && !fs.existsSync(blockPath)) {
        fs.writeFileSync(blockPath, 'not a folder: exports to sub/ must fail this run\n');
        blocked = true;
      }
      let restart: Promise<void> = Promise.resolve();
      let restartTimer: NodeJS.Timeout | null = null;
      // A restart that fails is the harness's failure: thrown once the run has ended (it must not
      // become an unhandled rejection, which would end every schedule of a --jobs campaign).
      let restartError: unknown = null;
      if (plan.serviceRestart) {
        const { atMs, downMs, signal } = plan.serviceRestart;
        restart = new Promise<void>((resolve) => {
          restartTimer = setTimeout(() => {
            void (async () => {
              try {
                await service.stop(signal);
                await sleep(downMs);
                service = await startServiceProcess({
                  statePath,
                  options: clean ? schedule.service : serviceOptions,
                  token,
                  ...ports,
                  log: serviceLog,
                  clockOffsetMs,
                });
              } catch (error) {
                restartError = error;
              }
              resolve();
            })();
          }, atMs);
        });
      }
      log(`seed ${schedule.seed} run ${i + 1}${clean ? ' (clean)' : ''}: ${JSON.stringify(plan)}`);
      const outcome = await runCli(
        [
          '--in',
          dirs.in,
          '--recipe',
          recipeFile,
          '--out',
          dirs.out,
          '--data',
          dirs.data,
          '--remote',
          proxy.url,
          '--key',
          apiKey,
          ...(day?.studioCap ? ['--daily-cap', String(day.studioCap)] : []),
          ...(day?.wait ? ['--wait'] : []),
        ],
        {
          killAtMs: plan.killAtMs,
          timeoutMs: opts.runTimeoutMs ?? 90_000,
          clockOffsetMs,
        },
      );
      const endedAtMs = clockNow();
      if (plan.serviceRestart) {
        // A restart planned after the run ended is skipped; one under way is awaited.
        if (restartTimer) clearTimeout(restartTimer);
        await Promise.race([restart, sleep(plan.serviceRestart.atMs < outcome.ms ? 60_000 : 0)]);
        if (restartError)
          throw new Error(
            `service restart during run ${i + 1} failed: ${String(restartError)}; ${serviceLog.slice(-3).join(' | ')}`,
          );
      }
      if (blocked) fs.rmSync(blockPath, { force: true });
      // Kept for diagnosis with --keep: what the run printed.
      fs.writeFileSync(path.join(workDir, `run-${i + 1}.stdout`), outcome.stdout);
      fs.writeFileSync(path.join(workDir, `run-${i + 1}.stderr`), outcome.stderr);
      snapshots.push(await snapshotFolder(dirs.out));
      const summary = parseSummary(outcome.stdout);
      const [ledgerNow, jobsNow] = await Promise.all([
        readLedger(service, EMAIL),
        readJobs(service, EMAIL),
      ]);
      const ledgerSpentAfter = -ledgerNow
        .filter((e) => e.kind !== 'grant')
        .reduce((sum, e) => sum + e.delta, 0);
      runs.push({
        index: i + 1,
        clean,
        plan,
        blocked,
        outcome,
        summary,
        ledgerSpentAfter,
        openJobsAfter: jobsNow.filter((j) => j.status === 'processing').length,
        endedAtMs,
      });
      log(
        `  -> exit ${outcome.code ?? outcome.signal}${outcome.killed ? ' (killed as planned)' : ''}${outcome.timedOut ? ' (TIMED OUT)' : ''} in ${(outcome.ms / 1000).toFixed(1)} s; ${summary ? `exported ${summary.exported}, skipped ${summary.skipped}, failed ${summary.failed.length}, uncertain ${summary.uncertain.length}, held ${summary.held?.length ?? 0}, spent ${summary.diamondsSpent}` : `no summary${outcome.stderr ? `: ${outcome.stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}` : ''}`}`,
      );
    }
    const [ledger, jobs, requestsByDay] = await Promise.all([
      readLedger(service, EMAIL),
      readJobs(service, EMAIL),
      readRequestsByDay(service, apiKey),
    ]);
    if (day) log(`  requests at the service per UTC day: ${JSON.stringify(requestsByDay)}`);
    // Kept for diagnosis with --keep: every request the proxy saw, with its fault and answer.
    fs.writeFileSync(path.join(workDir, 'proxy-log.json'), JSON.stringify(proxy.log, null, 1));
    const violations = await checkInvariants({
      day,
      requestsByDay,
      photos,
      runs,
      snapshots,
      ledger,
      jobs,
      proxyLog: proxy.log,
      outDir: dirs.out,
      serviceUrl: service.url,
    });
    return { seed: schedule.seed, schedule, runs, violations, workDir, ms: Date.now() - started };
  } finally {
    await proxy.close();
    await service.stop('SIGTERM');
    if (!opts.keep) fs.rmSync(workDir, { recursive: true, force: true });
  }
}
