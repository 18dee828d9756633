/**
 * Everything the reference service remembers, as one JSON document (validated when read back)
 * plus a folder of files. With a state path, every change is written through before the answer
 * goes out, so a restart (even after kill -9) keeps accounts, ledger, jobs, counts and files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

const LedgerEntrySchema = z.object({
  at: z.string(),
  email: z.string(),
  delta: z.number().int(),
  /** 'external': spent or credited by the service's own apps (the balance is shared, spec 1). */
  kind: z.enum(['grant', 'charge', 'refund', 'external']),
  jobId: z.string().optional(),
});
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

const PieceSchema = z.object({
  id: z.string(),
  finishAt: z.number(),
  fails: z.boolean(),
  state: z.enum(['pending', 'done', 'failed']),
  fileId: z.string().nullable(),
});
export type Piece = z.infer<typeof PieceSchema>;

const JobSchema = z.object({
  id: z.string(),
  email: z.string(),
  kind: z.enum(['generation', 'catalog']),
  toolId: z.string().nullable(),
  readySetId: z.string().nullable(),
  status: z.enum(['processing', 'completed', 'failed']),
  charged: z.number().int(),
  refunded: z.number().int(),
  createdAt: z.string(),
  request: z.unknown(),
  /** The saved styling, for template sets made from this job. */
  styling: z.record(z.string(), z.unknown()),
  inputFileId: z.string().nullable(),
  output: z.enum(['jpeg', 'png', 'video']),
  /** The whole job fails at its end (generations); shots fail one by one (catalog). */
  fails: z.boolean(),
  errorMessage: z.string().nullable(),
  pieces: z.array(PieceSchema),
  /** When the job reached its final state (ms since epoch). */
  endedAt: z.number().nullable().optional(),
});
export type Job = z.infer<typeof JobSchema>;

const StateSchema = z.object({
  version: z.literal(1),
  rng: z.number(),
  accounts: z.record(
    z.string(),
    z.object({ email: z.string(), balance: z.number().int(), createdAt: z.string() }),
  ),
  keys: z.record(z.string(), z.object({ email: z.string(), dailyCap: z.number().int() })),
  counts: z.record(z.string(), z.object({ day: z.string(), n: z.number().int() })),
  /** Per key and UTC day: requests counted, and how many of them the daily cap refused. */
  history: z
    .record(
      z.string(),
      z.record(z.string(), z.object({ n: z.number().int(), refused: z.number().int() })),
    )
    .default({}),
  ledger: z.array(LedgerEntrySchema),
  jobs: z.array(JobSchema),
  /** `at`: when it was uploaded (ms since epoch; absent in older state files). */
  uploads: z.record(
    z.string(),
    z.object({ email: z.string(), fileId: z.string(), at: z.number().optional() }),
  ),
  files: z.record(z.string(), z.object({ mime: z.string(), ext: z.string() })),
  templateSets: z.array(
    z.object({
      id: z.string(),
      email: z.string(),
      label: z.string(),
      toolId: z.string(),
      images: z.record(z.string(), z.unknown()),
      fields: z.record(z.string(), z.unknown()),
      coverFileId: z.string().nullable(),
      createdAt: z.string(),
    }),
  ),
});
export type State = z.infer<typeof StateSchema>;

export class Store {
  readonly state: State;
  readonly filesDir: string;
  private readonly ownsFilesDir: boolean;

  constructor(
    private readonly statePath: string | undefined,
    seed: number,
  ) {
    if (statePath && fs.existsSync(statePath)) {
      this.state = StateSchema.parse(JSON.parse(fs.readFileSync(statePath, 'utf8')));
    } else {
      this.state = {
        version: 1,
        rng: seed >>> 0,
        accounts: {},
        keys: {},
        counts: {},
        history: {},
        ledger: [],
        jobs: [],
        uploads: {},
        files: {},
        templateSets: [],
      };
    }
    this.ownsFilesDir = !statePath;
    this.filesDir = statePath
      ? `${statePath}.files`
      : fs.mkdtempSync(path.join(os.tmpdir(), 'reference-service-'));
    fs.mkdirSync(this.filesDir, { recursive: true });
  }

  /** Writes the state through (atomically: temp file then rename). */
  save(): void {
    if (!this.statePath) return;
    const tmp = `${this.statePath}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(this.state));
    fs.renameSync(tmp, this.statePath);
  }

  putFile(id: string, bytes: Buffer, mime: string, ext: string): void {
    const file = path.join(this.filesDir, id);
    fs.writeFileSync(`${file}.tmp`, bytes);
    fs.renameSync(`${file}.tmp`, file);
    this.state.files[id] = { mime, ext };
  }

  readFile(id: string): Buffer | null {
    if (!this.state.files[id]) return null;
    try {
      return fs.readFileSync(path.join(this.filesDir, id));
    } catch {
      return null;
    }
  }

  dispose(): void {
    if (this.ownsFilesDir) fs.rmSync(this.filesDir, { recursive: true, force: true });
  }
}
