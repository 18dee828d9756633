/**
 * Answers of finished jobs (completed and failed jobs never change again), so polls of them skip
 * the database. Least recently used entries go first; an entry is valid only for the origin its
 * URLs were built with.
 */
import type { ServiceResponse } from './error-response';

export type FinishedJob = {
  accountId: string;
  origin: string;
  /** The poll's answer, its JSON included: built once, as it never changes. */
  answer: ServiceResponse;
};

export class FinishedJobCache {
  private readonly entries = new Map<string, FinishedJob>();
  constructor(private readonly capacity: number) {}

  get(id: string, origin: string): FinishedJob | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.origin !== origin) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry;
  }

  set(id: string, entry: FinishedJob): void {
    this.entries.delete(id);
    this.entries.set(id, entry);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}
