/**
 * The body of GET /v1/generations/{id} for a job, including what latitude options change: a
 * catalog job queued first (null counts), a completed generation whose results are not listed
 * yet, a per-shot `shots` list, packTotal counting the whole ready set, and a completed job
 * answered with a status the spec does not name (`completedAnsweredAs`), a failed output listed
 * in its place (`failedOutputListedAs`), an unnamed in-progress word with a preview
 * (`runningAnsweredAs`).
 */
import { readySetById } from './catalog';
import type { ReferenceServiceOptions } from './options';
import type { Job } from './state';

export function pollBody(
  job: Job,
  options: ReferenceServiceOptions,
  status: string,
  resultUrl: (fileId: string) => string,
  now = Date.now(),
): Record<string, unknown> {
  const queued =
    job.kind === 'catalog' && now - Date.parse(job.createdAt) < (options.catalogQueuedMs ?? 0);
  // In completion order, so earlier entries never move as more shots finish.
  const done = job.pieces.filter((p) => p.state === 'done').sort((a, b) => a.finishAt - b.finishAt);
  const unlisted =
    job.kind === 'generation' &&
    (job.status === 'failed'
      ? !options.failedWithResults
      : job.status !== 'completed' || now - (job.endedAt ?? 0) < (options.completedEmptyMs ?? 0));
  const body: Record<string, unknown> = {
    id: job.id,
    status: queued ? 'pack_queued' : status,
    // A failed generation has no results; a catalog job keeps the shots it made (unlisted once
    // `failed` with catalogPartialFailedStatus: spec 2.3's empty array). failedWithResults lists
    // what either made.
    resultUrls:
      queued ||
      unlisted ||
      (options.catalogPartialFailedStatus && job.status === 'failed' && !options.failedWithResults)
        ? []
        : done.map((p) => resultUrl(p.fileId!)),
    errorMessage: job.status === 'failed' ? job.errorMessage : null,
  };
  // failedOutputListedAs: a finished job lists each output in its place, a failed one as null or "".
  const slot = options.failedOutputListedAs;
  if (slot && job.status !== 'processing' && (body.resultUrls as unknown[]).length > 0)
    body.resultUrls = job.pieces
      .filter((p) => p.state !== 'pending')
      .map((p) => (p.state === 'done' ? resultUrl(p.fileId!) : slot === 'null' ? null : ''));
  // runningAnsweredAs: an in-progress word the spec does not name, maybe with a preview listed.
  const running = options.runningAnsweredAs;
  const endsAt = Math.max(...job.pieces.map((p) => p.finishAt));
  const startedAt = Date.parse(job.createdAt);
  if (
    running &&
    job.kind === 'generation' &&
    job.status === 'processing' &&
    now >= startedAt + running.fromShare * (endsAt - startedAt)
  )
    Object.assign(body, {
      status: running.status,
      resultUrls: running.preview && job.inputFileId ? [resultUrl(job.inputFileId)] : [],
    });
  const unnamed = options.completedAnsweredAs;
  if (unnamed && job.status === 'completed')
    Object.assign(body, {
      status: unnamed.status,
      resultUrls: [],
      errorMessage: unnamed.errorMessage ?? null,
    });
  if (job.kind === 'catalog' || job.pieces.length > 1) {
    const setSize = job.readySetId ? readySetById(job.readySetId)?.shots.length : undefined;
    body.packTotal = queued
      ? null
      : options.packTotalFullSet && setSize
        ? setSize
        : job.pieces.length;
    body.packCompleted = queued ? null : done.length;
    body.packFailed = queued ? null : job.pieces.filter((p) => p.state === 'failed').length;
  }
  if (job.kind === 'catalog' && options.catalogShotsField)
    body.shots = job.pieces.map((p) => ({
      id: p.id,
      status: queued
        ? 'queued'
        : p.state === 'done'
          ? 'completed'
          : p.state === 'failed'
            ? 'failed'
            : 'processing',
      imageUrl: !queued && p.fileId ? resultUrl(p.fileId) : null,
    }));
  return body;
}
